import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { ClickHouseClient } from '../clickhouse.js';
import { chTime } from '../time.js';

/**
 * Export of a project's events (docs/data-rights.md), formatted by ClickHouse.
 *
 * With a ClickHouse server the whole export is one query whose HTTP response is piped through
 * unchanged (`exec` gives the raw stream): ClickHouse writes CSVWithNames, JSONEachRow or Parquet
 * as the client reads, TCP backpressure paces it, and a client that goes away closes the
 * connection, which cancels the query (cancel_http_readonly_queries_on_client_close).
 *
 * Embedded chDB's connection adapter (`chdb/connection`) materializes every result in memory
 * before returning it, and runs parameterized queries one at a time process-wide (notes/chdb.md).
 * One query for a whole export would hold all its rows in memory and hold up ingestion and
 * metrics until it ended, so there the export pages through the table by its sort key
 * (project_id, created_at, event_id) in bounded pages: each page is a short query, later pages are
 * asked for only as the client reads, and other queries run between pages. CSV and JSON Lines
 * pages are ClickHouse's output, concatenated (the CSV header only on the first); a Parquet file
 * cannot be concatenated, so there each page becomes one row group of a file written here
 * (hyparquet-writer), with the same columns and types.
 */
export const EXPORT_FORMATS = ['csv', 'jsonl', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export type EventExportScope = {
  projectId: string;
  /** First instant of the window. */
  start: Date;
  /** First instant after the window. */
  end: Date;
  /** Event names to export; null: every name. */
  names: string[] | null;
};

export type EventExportOptions = {
  /** True with a ClickHouse server (raw HTTP streaming); false with embedded chDB (paging). */
  streaming: boolean;
  /** Rows per page when paging. */
  pageRows?: number;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
};

/** Default page of the paged export: a few MB of text, a short query. */
export const EXPORT_PAGE_ROWS = 50_000;
/** Rows per Parquet row group written here: about 0.2 s of encoding on this machine's cores. */
const PARQUET_ROW_GROUP = 10_000;

/** ClickHouse's name of each format, and the one of the later pages (no second header). */
const CLICKHOUSE_FORMAT: Record<Exclude<ExportFormat, 'parquet'>, { first: string; next: string }> = {
  csv: { first: 'CSVWithNames', next: 'CSV' },
  jsonl: { first: 'JSONEachRow', next: 'JSONEachRow' },
};

/**
 * The exported columns. Text formats get ISO 8601 times and the properties as the JSON text that
 * was sent (CSV: empty when none; JSON Lines: null); Parquet gets a timestamp (ms, UTC) column.
 */
function selectList(format: ExportFormat): string {
  const properties = format === 'csv' ? 'properties_raw' : "nullIf(properties_raw, '')";
  const createdAt = format === 'parquet' ? 'created_at' : "concat(replaceOne(toString(created_at), ' ', 'T'), 'Z')";
  return `toString(event_id) AS id, event_name, user_id, ${properties} AS properties, ${createdAt} AS created_at`;
}

/**
 * The rows of `condition` in key order, as `columns`. The output names are the columns' own
 * (created_at as text, say); in one SELECT ClickHouse would read them in WHERE and ORDER BY as
 * those expressions, so the filter and the order are applied in a subquery on the raw columns.
 */
const orderedSelect = (columns: string, condition: string) =>
  `SELECT ${columns} FROM (
     SELECT event_id, event_name, user_id, properties_raw, created_at FROM events
     WHERE ${condition}
     ORDER BY created_at, event_id)`;

function scopeCondition(scope: EventExportScope): string {
  return `project_id = {projectId:UUID}
    AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')}
    ${scope.names === null ? '' : 'AND event_name IN {names:Array(String)}'}`;
}

function scopeParams(scope: EventExportScope): Record<string, unknown> {
  return {
    projectId: scope.projectId,
    start: chTime(scope.start),
    end: chTime(scope.end),
    ...(scope.names === null ? {} : { names: scope.names }),
  };
}

/**
 * The export as chunks of bytes, produced as they are asked for: nothing is read from ClickHouse
 * before the first chunk is, and ending the iteration early stops it.
 */
export function exportEvents(
  client: ClickHouseClient,
  scope: EventExportScope,
  format: ExportFormat,
  options: EventExportOptions,
): AsyncGenerator<Buffer> {
  if (options.streaming) return streamedExport(client, scope, format, options.signal);
  // Parquet pages are parsed and encoded here, so they are kept smaller: shorter stalls.
  const pageRows = options.pageRows ?? (format === 'parquet' ? PARQUET_ROW_GROUP * 2 : EXPORT_PAGE_ROWS);
  return format === 'parquet' ? parquetPages(client, scope, pageRows) : textPages(client, scope, format, pageRows);
}

/** Server mode: one query, its HTTP response body passed through as it arrives. */
async function* streamedExport(
  client: ClickHouseClient,
  scope: EventExportScope,
  format: ExportFormat,
  signal: AbortSignal | undefined,
): AsyncGenerator<Buffer> {
  const clickhouseFormat = format === 'parquet' ? 'Parquet' : CLICKHOUSE_FORMAT[format].first;
  {
    const result = await client.exec({
      query: `${orderedSelect(selectList(format), scopeCondition(scope))} FORMAT ${clickhouseFormat}`,
      query_params: scopeParams(scope),
      abort_signal: signal,
      clickhouse_settings: {
        cancel_http_readonly_queries_on_client_close: 1,
        wait_end_of_query: 0,
        // The codec of the paged export's files (hyparquet-writer's default), readable everywhere.
        ...(format === 'parquet' ? { output_format_parquet_compression_method: 'snappy', output_format_parquet_string_as_string: 1 } : {}),
      },
    });
    try {
      for await (const chunk of result.stream) yield chunk as Buffer;
    } finally {
      result.stream.destroy();
    }
  }
}

type PageKey = { createdAt: string; eventId: string };

/** Before every row: the paging cursor's start. */
const FIRST_KEY: PageKey = { createdAt: '1970-01-01 00:00:00.000', eventId: '00000000-0000-0000-0000-000000000000' };

/**
 * The key of the last row of the page that starts after `after`, or null when fewer than
 * `pageRows` rows are left (the last page runs to the window's end). Reads only key columns.
 */
async function pageEnd(client: ClickHouseClient, scope: EventExportScope, after: PageKey, pageRows: number): Promise<PageKey | null> {
  const result = await client.query({
    // Output names differ from the columns, which WHERE and ORDER BY must read as they are.
    query: `SELECT toString(created_at) AS key_time, toString(event_id) AS key_id FROM events
            WHERE ${scopeCondition(scope)} AND ${afterCondition}
            ORDER BY created_at, event_id LIMIT 1 OFFSET {offset:UInt64}`,
    query_params: { ...scopeParams(scope), afterTime: after.createdAt, afterId: after.eventId, offset: pageRows - 1 },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ key_time: string; key_id: string }>();
  return row ? { createdAt: row.key_time, eventId: row.key_id } : null;
}

// The first comparison lets ClickHouse use the sort key to skip granules; the tuple is exact.
const afterCondition = `created_at >= {afterTime:DateTime64(3, 'UTC')} AND (created_at, event_id) > ({afterTime:DateTime64(3, 'UTC')}, {afterId:UUID})`;
const uptoCondition = `(created_at, event_id) <= ({uptoTime:DateTime64(3, 'UTC')}, {uptoId:UUID})`;

/** The pages' bounds, in order: rows after `after` up to and including `upto` (null: to the end). */
async function* pageBounds(client: ClickHouseClient, scope: EventExportScope, pageRows: number) {
  let after = FIRST_KEY;
  for (;;) {
    const upto = await pageEnd(client, scope, after, pageRows);
    yield { after, upto };
    if (!upto) return;
    after = upto;
  }
}

const pageCondition = (scope: EventExportScope, upto: PageKey | null) =>
  `${scopeCondition(scope)} AND ${afterCondition}${upto ? ` AND ${uptoCondition}` : ''}`;

function pageParams(scope: EventExportScope, after: PageKey, upto: PageKey | null): Record<string, unknown> {
  return {
    ...scopeParams(scope),
    afterTime: after.createdAt,
    afterId: after.eventId,
    ...(upto ? { uptoTime: upto.createdAt, uptoId: upto.eventId } : {}),
  };
}

async function* textPages(
  client: ClickHouseClient,
  scope: EventExportScope,
  format: Exclude<ExportFormat, 'parquet'>,
  pageRows: number,
): AsyncGenerator<Buffer> {
  let first = true;
  for await (const { after, upto } of pageBounds(client, scope, pageRows)) {
    const result = await client.exec({
      query: `${orderedSelect(selectList(format), pageCondition(scope, upto))}
              FORMAT ${first ? CLICKHOUSE_FORMAT[format].first : CLICKHOUSE_FORMAT[format].next}`,
      query_params: pageParams(scope, after, upto),
    });
    first = false;
    for await (const chunk of result.stream) yield chunk as Buffer;
  }
}

/** The Parquet schema of an events export: what ClickHouse's own Parquet output of selectList('parquet') holds. */
const PARQUET_SCHEMA = [
  { name: 'root', num_children: 5 },
  { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'event_name', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'user_id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
  { name: 'properties', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
  { name: 'created_at', type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', repetition_type: 'REQUIRED' },
] as const;

/**
 * A ByteWriter whose bytes are handed out after every row group: the writer's buffer is emptied
 * each time, so the file is never held whole. Encoding a row group is synchronous JavaScript, so
 * after each one the writer yields to the event loop (ParquetWriter awaits the promise `flush`
 * returns), and other requests are answered between row groups.
 */
class ChunkedByteWriter extends ByteWriter {
  #chunks: Buffer[] = [];
  flush(): Promise<void> {
    this.#take();
    return new Promise((resolve) => setImmediate(resolve));
  }
  override finish(): void {
    this.#take();
  }
  #take(): void {
    if (this.index === 0) return;
    this.#chunks.push(Buffer.from(new Uint8Array(this.buffer, 0, this.index)));
    this.index = 0;
  }
  take(): Buffer[] {
    return this.#chunks.splice(0, this.#chunks.length);
  }
}

async function* parquetPages(client: ClickHouseClient, scope: EventExportScope, pageRows: number): AsyncGenerator<Buffer> {
  const writer = new ChunkedByteWriter();
  const parquet = new ParquetWriter({ writer, schema: PARQUET_SCHEMA as never, createdBy: 'feedback-service events export' });
  yield* writer.take();
  for await (const { after, upto } of pageBounds(client, scope, pageRows)) {
    const result = await client.query({
      query: orderedSelect(
        "toString(event_id) AS id, event_name, user_id, nullIf(properties_raw, '') AS properties, toUnixTimestamp64Milli(created_at) AS created_at",
        pageCondition(scope, upto),
      ),
      query_params: pageParams(scope, after, upto),
      format: 'JSONCompactEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const rows = await result.json<[string, string, string, string | null, number]>();
    if (rows.length === 0) continue;
    await parquet.write({
      columnData: [
        { name: 'id', data: rows.map((row) => row[0]) },
        { name: 'event_name', data: rows.map((row) => row[1]) },
        { name: 'user_id', data: rows.map((row) => row[2]) },
        { name: 'properties', data: rows.map((row) => row[3]) },
        { name: 'created_at', data: rows.map((row) => BigInt(row[4])) },
      ],
      // Row groups of at most PARQUET_ROW_GROUP rows: each is encoded in one go, without a break.
      rowGroupSize: PARQUET_ROW_GROUP,
    });
    yield* writer.take();
  }
  parquet.finish();
  yield* writer.take();
}
