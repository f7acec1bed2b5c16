import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { createNamedPipe, pipedOutput } from './piped-output.js';

/** Engine limits of one read-only query. */
export type ReadonlyLimits = {
  /** Time the engine gives the query (max_execution_time), in milliseconds. */
  timeoutMs: number;
  /** Result rows at most (max_result_rows, with result_overflow_mode = 'break'). */
  maxResultRows: number;
  /** Threads of the query (max_threads); 0 leaves the engine's default. */
  maxThreads: number;
  /** Memory of the query at most (max_memory_usage), in bytes; unset leaves the engine's default. */
  maxMemoryBytes?: number | undefined;
  /**
   * Bytes of the result at most: the engine's max_result_bytes, and the bound of runBounded's
   * output. The engine counts bytes as rows are read, not as they are computed (measured:
   * `range(2000)` over `numbers(10000)` passes it), so the output bound is what holds.
   */
  maxResultBytes: number;
  /**
   * Row filters the engine adds to every read of a table (additional_table_filters), by table
   * name: the filter expression is SQL the service writes from its own validated values, never
   * request text (project-query.ts). Set before readonly, so the query cannot lift it.
   */
  tableFilters?: Readonly<Record<string, string>> | undefined;
  /**
   * The engine's own output defaults (the ClickHouse interface) instead of the JSON routes' 64-bit
   * integers as strings.
   */
  engineOutputDefaults?: boolean | undefined;
  /** Rows per block of output; unset: 1024, so runBounded's bound is checked often. */
  maxBlockSize?: number | undefined;
  /**
   * Further settings of the session, set before readonly like the others: only names and values
   * the caller has checked (the ClickHouse interface's list of harmless output settings). Values
   * go as string literals, which the engine parses to the setting's type.
   */
  extraSettings?: Readonly<Record<string, string | number>> | undefined;
};

export type ParamValue = string | number | boolean;

/**
 * A connection on which everything runs read-only, for one query and its checks: `run` executes
 * one statement and answers its output in `format`. `{name:Type}` parameters are the session's:
 * the values given to `open`, plus those given to `run`.
 */
export type ReadonlySession = {
  run(statement: string, format: 'JSONEachRow' | 'JSON', params?: Record<string, ParamValue>): Promise<string>;
  /**
   * Runs one statement and answers its JSONEachRow output, read as the engine produces it and
   * refused with ReadonlyOutputTooLarge once it passes `maxBytes`: the process never holds more
   * than the bound and one piece of output.
   */
  runBounded(statement: string, maxBytes: number): Promise<Buffer>;
  /**
   * Runs one statement and yields its output in `format` as the engine writes it, piece by piece:
   * nothing is held beyond the piece in hand. Leaving the loop (or `signal`) cancels the query.
   */
  stream(statement: string, format: string, signal?: AbortSignal, progress?: StreamProgress): AsyncIterable<Uint8Array>;
  /** Releases the session; a statement still running on it finishes first. */
  close(): void;
  /** Settles when no statement of the session runs in the engine any more. */
  idle(): Promise<void>;
};

/**
 * What the engine tells of a streamed statement while it runs, filled as it runs (the ClickHouse
 * interface's X-ClickHouse-Summary): result rows and bytes as the engine reports each piece, and a
 * ClickHouse server's own summary header.
 */
export type StreamProgress = { resultRows: number; resultBytes: number; serverSummary?: Record<string, string> };

/** The output of a statement passed its bound (ReadonlySession.runBounded). */
export class ReadonlyOutputTooLarge extends Error {
  override name = 'ReadonlyOutputTooLarge';
  constructor(readonly maxBytes: number) {
    super(`the result is larger than ${maxBytes} bytes`);
  }
}

/** Collects pieces of output up to `maxBytes`; past it, throws ReadonlyOutputTooLarge. */
async function collectBounded(pieces: AsyncIterable<Uint8Array>, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const piece of pieces) {
    size += piece.byteLength;
    if (size > maxBytes) throw new ReadonlyOutputTooLarge(maxBytes);
    chunks.push(Buffer.from(piece));
  }
  return Buffer.concat(chunks, size);
}

/** Where read-only sessions come from: embedded chDB or a ClickHouse server. */
export type ReadonlyEngine = {
  open(limits: ReadonlyLimits, params: Record<string, ParamValue>): Promise<ReadonlySession>;
};

/** Bytes of a Parquet row group of the ClickHouse interface, unless the request sets its own. */
const PARQUET_ROW_GROUP_BYTES = 16 * 1024 * 1024;

/** Settings of every read-only statement; readonly comes last so the others may still be set. */
function readonlySettings(limits: ReadonlyLimits): Record<string, number | string> {
  return {
    max_execution_time: Math.max(0.001, limits.timeoutMs / 1000),
    max_result_rows: limits.maxResultRows,
    max_result_bytes: limits.maxResultBytes,
    // A result past either limit fails the query: the statement that returns rows is wrapped in a
    // LIMIT of one row more than is answered (readonly-query.ts), so rows alone never reach it.
    result_overflow_mode: 'throw',
    // Output comes in pieces of at most this many rows, so runBounded's bound is checked
    // often: with the default (65,409) one block of wide rows was a single 129 MB piece.
    max_block_size: limits.maxBlockSize ?? 1024,
    // 64-bit integers as strings, exact in JavaScript (the JSON routes; the interface keeps the engine's default).
    ...(limits.engineOutputDefaults ? {} : { output_format_json_quote_64bit_integers: 1 }),
    ...(limits.maxThreads > 0 ? { max_threads: limits.maxThreads } : {}),
    ...(limits.maxMemoryBytes !== undefined ? { max_memory_usage: limits.maxMemoryBytes } : {}),
    ...(limits.tableFilters ? { additional_table_filters: mapText(limits.tableFilters) } : {}),
    // The interface's Parquet: the writer holds a whole row group before it writes any of it, by
    // default up to 1,000,000 rows or 512 MB, in this process with embedded chDB (measured: +330 MB
    // and 1.4 s to the first byte for a 1-million-row export). A request may set its own.
    ...(limits.engineOutputDefaults ? { output_format_parquet_row_group_size_bytes: PARQUET_ROW_GROUP_BYTES } : {}),
    ...limits.extraSettings,
    allow_ddl: 0,
    allow_introspection_functions: 0,
    readonly: 1,
  };
}

/**
 * A ClickHouse server: every statement carries `readonly = 1` and the limits as settings of the
 * request, which the server applies before it parses the statement, so the statement's own
 * SETTINGS cannot lift them; the HTTP interface runs one statement per request. Pointed at a user
 * whose profile is read-only with `<constraints>` (docs/sql-safety.md), the same holds even if
 * a setting here were wrong.
 */
export function serverReadonlyEngine(client: ClickHouseClient): ReadonlyEngine {
  return {
    async open(limits, params) {
      const settings = readonlySettings(limits) as ClickHouseSettings;
      const running = new Set<Promise<unknown>>();
      return {
        async run(statement, format, extra = {}) {
          const call = client
            .query({ query: statement, format, query_params: { ...params, ...extra }, clickhouse_settings: settings })
            .then((r) => r.text());
          running.add(call);
          try {
            return await call;
          } finally {
            running.delete(call);
          }
        },
        async runBounded(statement, maxBytes) {
          const call = (async () => {
            const result = await client.query({
              query: statement,
              format: 'JSONEachRow',
              query_params: params,
              clickhouse_settings: settings,
            });
            const stream = result.stream();
            try {
              return await collectBounded(rowBytes(stream), maxBytes);
            } finally {
              stream.destroy();
            }
          })();
          running.add(call);
          try {
            return await call;
          } finally {
            running.delete(call);
          }
        },
        stream(statement, format, signal, progress) {
          // The statement and its FORMAT go as one text: the output comes as the server writes
          // it (exec), never parsed by the client. Our own text, checked: format is a name the
          // engine listed as an output format (ClickHouse interface).
          let done: () => void = () => {};
          running.add(new Promise<void>((resolve) => (done = resolve)));
          return (async function* () {
            try {
              const result = await client.exec({
                query: `${statement} FORMAT ${format}`,
                query_params: params,
                // A server goes on with a read whose client has gone unless told otherwise.
                clickhouse_settings: { ...settings, cancel_http_readonly_queries_on_client_close: 1 },
                ...(signal ? { abort_signal: signal } : {}),
              });
              if (progress) progress.serverSummary = serverSummary(result.response_headers['x-clickhouse-summary']);
              // Counted as the server's pieces pass: the bound holds whatever the size of a block.
              yield* boundedPieces(result.stream as AsyncIterable<Buffer>, limits.maxResultBytes, () =>
                resultTooLarge(limits.maxResultBytes),
              );
            } finally {
              done();
            }
          })();
        },
        close() {},
        async idle() {
          await Promise.allSettled([...running]);
        },
      };
    },
  };
}

/** A server's X-ClickHouse-Summary header, read; undefined when absent or not JSON. */
function serverSummary(header: string | string[] | undefined): Record<string, string> | undefined {
  try {
    return typeof header === 'string' ? (JSON.parse(header) as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}

/** The bytes of each JSONEachRow row of a server's result stream, with its line break. */
async function* rowBytes(stream: AsyncIterable<{ text: string }[]>): AsyncGenerator<Uint8Array> {
  for await (const rows of stream) {
    for (const row of rows) yield Buffer.from(`${row.text}\n`);
  }
}

type ChdbSession = {
  queryAsync(
    query: string,
    opts?: { format?: string },
  ): Promise<{ text(): string; bytes(): Uint8Array; rowsRead: number; bytesRead: number }>;
  queryStream(
    query: string,
    opts?: { format?: string; signal?: AbortSignal },
  ): AsyncIterable<{ raw(): Uint8Array; numRows: number; numBytes: number }>;
  close(): void;
};
type ChdbModule = { Session: new (path: string) => ChdbSession };

const require = createRequire(import.meta.url);

/**
 * Embedded chDB: a fresh chDB session (its own native connection on the service's data
 * directory) per query, so
 * - nothing of one query (settings, parameter values, a failed query's partial output) reaches
 *   another: each starts from the engine's defaults and its session is closed after it;
 * - the query runs beside the service's own connection, not behind it: statements without driver
 *   parameters do not take chdb's process-wide parameter chain, so metrics and ingestion never
 *   wait for an operator query. Parameters are bound as the session's `param_<name>` settings,
 *   which are per connection (measured: no value crossed between sessions under load).
 * The session is made read-only once, at open (`SET …, readonly = 1`); from then on the engine
 * refuses every write, DDL, SET and table function that reaches files, the network or processes,
 * and `SET readonly = 0` is itself refused.
 */
export function chdbReadonlyEngine(dataPath: string): ReadonlyEngine {
  const { Session } = require('chdb') as ChdbModule;
  return {
    async open(limits, params) {
      const session = new Session(dataPath);
      const running = new Set<Promise<unknown>>();
      const exec = (sql: string, format: string) => {
        const call = session.queryAsync(sql, { format });
        running.add(call);
        void call.then(
          () => running.delete(call),
          () => running.delete(call),
        );
        return call.then((r) => r.text());
      };
      // One SET per value: each is parsed under max_query_size, which their sum could pass.
      const bind = async (values: Record<string, ParamValue>) => {
        for (const [name, value] of Object.entries(values)) {
          await exec(`SET ${paramSetting(name)} = ${stringLiteral(paramText(value))}`, 'TSV');
        }
      };
      try {
        // The statements that bind parameters are longer than the default max_query_size (256 KiB)
        // for a value at the API's bound (src/api/sql/sql.routes.ts) once escaped: room for twice that.
        await exec(`SET max_query_size = ${BIND_MAX_QUERY_BYTES}`, 'TSV');
        await exec(`SET ${settingsText(readonlySettings(limits))}`, 'TSV');
        await bind(params);
      } catch (error) {
        session.close();
        throw error;
      }
      return {
        async run(statement, format, extra = {}) {
          await bind(extra);
          return exec(statement, format);
        },
        runBounded(statement, maxBytes) {
          // Streamed: the engine's output is taken piece by piece, and leaving the loop past the
          // bound cancels the rest of the query (chdb's stream ends its cursor on return).
          const call = (async () => {
            const pieces = async function* () {
              for await (const chunk of session.queryStream(statement, { format: 'JSONEachRow' })) yield chunk.raw();
            };
            return collectBounded(pieces(), maxBytes);
          })();
          running.add(call);
          void call.then(
            () => running.delete(call),
            () => running.delete(call),
          );
          return call;
        },
        stream(statement, format, signal, progress) {
          // The session stays busy until the engine is done with the statement, which may be
          // after the loop was left (a cancelled statement stops at its next block).
          let settle: (settled: Promise<void>) => void = () => {};
          const finished = new Promise<void>((resolve) => (settle = (settled) => void settled.then(resolve, resolve)));
          running.add(finished);
          void finished.then(() => running.delete(finished));
          const tooLarge = () => resultTooLarge(limits.maxResultBytes);
          return (async function* () {
            let handedOver = false;
            try {
              // chDB streams only SELECTs ("Streaming query is not supported" for DESCRIBE): a
              // DESCRIBE, a few rows, is answered whole.
              if (statement.startsWith('DESCRIBE ')) {
                const whole = await session.queryAsync(statement, { format });
                if (progress) Object.assign(progress, { resultRows: whole.rowsRead, resultBytes: whole.bytesRead });
                yield whole.bytes();
                return;
              }
              const pipe = await createNamedPipe().catch(() => undefined);
              if (!pipe) {
                // No mkfifo on this system: chDB's own streaming query, block by block.
                yield* boundedPieces(chdbStream(session, statement, format, signal, progress), limits.maxResultBytes, tooLarge);
                return;
              }
              handedOver = true;
              const marker = `/* feedback-export ${randomUUID()} */`;
              yield* countedBytes(
                pipedOutput({
                  pipe,
                  start: () => {
                    // chDB's figures of a statement are its result's rows and bytes (in memory): known
                    // once it has finished, so a long stream's summary has the output bytes only.
                    const call = session
                      .queryAsync(`${marker} ${statement} INTO OUTFILE ${stringLiteral(pipe.path)} TRUNCATE FORMAT ${format}`, {
                        format: 'TSV',
                      })
                      .then((result) => {
                        if (progress) progress.resultRows = result.rowsRead;
                        return result;
                      });
                    running.add(call);
                    void call.then(
                      () => running.delete(call),
                      () => running.delete(call),
                    );
                    return call;
                  },
                  cancel: () => killQuery(dataPath, marker),
                  maxBytes: limits.maxResultBytes,
                  tooLarge,
                  signal,
                  onSettled: settle,
                }),
                progress,
              );
            } finally {
              if (!handedOver) settle(Promise.resolve());
            }
          })();
        },
        close: () => session.close(),
        async idle() {
          await Promise.allSettled([...running]);
        },
      };
    },
  };
}

/** chDB's own streaming query: the output of each block as one piece. */
async function* chdbStream(
  session: ChdbSession,
  statement: string,
  format: string,
  signal?: AbortSignal,
  progress?: StreamProgress,
): AsyncGenerator<Uint8Array> {
  // chdb's stream ends its cursor (cancelling the query) when the loop is left or the signal fires.
  for await (const chunk of session.queryStream(statement, { format, ...(signal ? { signal } : {}) })) {
    const piece = chunk.raw();
    if (progress) {
      progress.resultRows += chunk.numRows;
      progress.resultBytes += piece.byteLength;
    }
    yield piece;
  }
}

/** The pieces as they are, their bytes added to the summary's result bytes as they pass. */
async function* countedBytes(pieces: AsyncIterable<Uint8Array>, progress: StreamProgress | undefined): AsyncGenerator<Uint8Array> {
  for await (const piece of pieces) {
    if (progress) progress.resultBytes += piece.byteLength;
    yield piece;
  }
}

/**
 * Pieces of output up to `maxBytes` in all: the piece that would pass it is not yielded, the
 * error is thrown instead (and leaving the loop cancels the query).
 */
async function* boundedPieces(pieces: AsyncIterable<Uint8Array>, maxBytes: number, tooLarge: () => Error): AsyncGenerator<Uint8Array> {
  let sent = 0;
  for await (const piece of pieces) {
    sent += piece.byteLength;
    if (sent > maxBytes) throw tooLarge();
    yield piece;
  }
}

/** The result passed the output bound, in ClickHouse's words for max_result_bytes (code 396). */
export function resultTooLarge(maxBytes: number): Error {
  return new Error(`Code: 396. DB::Exception: Limit for result exceeded, max bytes: ${binaryBytes(maxBytes)}. (TOO_MANY_ROWS_OR_BYTES)`);
}

/** A byte count as ClickHouse writes it in its limit messages (`1.00 MiB`). */
export function binaryBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(2)} ${units[unit]}`;
}

/**
 * Stops the embedded statement whose text begins with `marker` (KILL QUERY, from a connection of
 * its own: the statement's connection is busy with it). chDB's single-shot queries have no cancel
 * of their own; the engine stops at its next block and the statement fails with code 394.
 */
async function killQuery(dataPath: string, marker: string): Promise<void> {
  const { Session } = require('chdb') as ChdbModule;
  const killer = new Session(dataPath);
  try {
    await killer.queryAsync(`KILL QUERY WHERE startsWith(query, ${stringLiteral(marker)}) ASYNC`, { format: 'TSV' });
  } finally {
    killer.close();
  }
}

/** max_query_size of an embedded read-only session: a bound parameter value, escaped, fits. */
const BIND_MAX_QUERY_BYTES = 1024 * 1024;

/** `param_<name>`: the name is checked, never quoted into the statement as it came. */
function paramSetting(name: string): string {
  if (!/^\w{1,64}$/.test(name)) throw new RangeError(`invalid parameter name ${JSON.stringify(name)}`);
  return `param_${name}`;
}

/**
 * A parameter value as ClickHouse reads `param_<name>` (the Escaped text format, as
 * @clickhouse/client sends parameters over HTTP): booleans as 1/0, strings with backslash, tab,
 * newline and carriage return escaped. Round-trips every string (test/olap/admin-sql-hostile.test.ts).
 */
function paramText(value: ParamValue): string {
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number') return String(value);
  return value.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** A ClickHouse string literal: backslash and quote escaped, so the value cannot end it early. */
function stringLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * A Map(String, String) setting as ClickHouse parses it from text (`{'events':'…'}`), the form a
 * server takes as a request setting and chDB's `SET` takes as a string.
 */
function mapText(entries: Readonly<Record<string, string>>): string {
  return `{${Object.entries(entries)
    .map(([key, value]) => `${stringLiteral(key)}:${stringLiteral(value)}`)
    .join(',')}}`;
}

function settingsText(settings: ClickHouseSettings): string {
  return Object.entries(settings)
    .map(([name, value]) => `${name} = ${typeof value === 'number' ? value : stringLiteral(String(value))}`)
    .join(', ');
}
