import { type AstVerdict, judgeAst, KNOWN_TABLE_FUNCTIONS } from './readonly-ast-guard.js';
import {
  type ParamValue,
  type ReadonlyEngine,
  type ReadonlyLimits,
  ReadonlyOutputTooLarge,
  type ReadonlySession,
  type StreamProgress,
} from './readonly-session.js';

/** A query refused, or failed in the engine: its message is safe to show to the caller. */
export class ReadonlyQueryRefused extends Error {
  override name = 'ReadonlyQueryRefused';
  constructor(
    message: string,
    /** ClickHouse's error code: the engine's own when it refused, else the guard's (AstVerdict). */
    readonly code?: number,
  ) {
    super(message);
  }
}

export type ReadonlyQueryLimits = Omit<ReadonlyLimits, 'maxResultRows'> & {
  /** Rows returned at most; one more is read to tell whether the result was cut. */
  maxRows: number;
  /** Time past the engine's limit after which the caller is answered anyway. */
  graceMs?: number;
};

export type ReadonlyQueryResult = {
  columns: { name: string; type: string }[];
  /**
   * The rows as the JSON text of an array of objects (ClickHouse's JSON encoding of each row),
   * never parsed here: the answer splices it in (api/sql/sql-result-body.ts), so a result of
   * many megabytes costs the event loop a few copies instead of a parse and a serialization.
   */
  rowsJson: Buffer;
  rowCount: number;
  /** true when the result had more rows than maxRows and was cut. */
  truncated: boolean;
};

/** What both read-only SQL lanes (operator and project queries) answer for one query. */
export type ReadonlyAnswer = {
  columns: { name: string; type: string }[];
  /** The rows as JSON text of an array of objects (ReadonlyQueryResult says why it stays text). */
  rows_json: Buffer;
  row_count: number;
  /** true when the result had more rows than the limit and was cut. */
  truncated: boolean;
  elapsed_ms: number;
};

/** The answer of a query that began at `started` (performance.now()), its wait for a turn included. */
export function readonlyAnswer(result: ReadonlyQueryResult, started: number): ReadonlyAnswer {
  return {
    columns: result.columns,
    rows_json: result.rowsJson,
    row_count: result.rowCount,
    truncated: result.truncated,
    elapsed_ms: Math.round(performance.now() - started),
  };
}

/** Bytes of a query's output at most (both read-only SQL lanes); past it the query is a 400. */
export const READONLY_RESULT_MAX_BYTES = 16 * 1024 * 1024;

export type ReadonlyQueryOptions = {
  /** Receives a promise that settles once the engine has finished every statement of this query. */
  onEngineIdle?: (idle: Promise<void>) => void;
  /**
   * A further check of the one statement that will run, after the read-only checks passed and
   * before it runs (tenant SQL narrows what may be read: project-query.ts). It receives the
   * statement's `EXPLAIN AST` rows and the session, on which it may run statements of its own.
   */
  check?: (statement: string, astRows: string[], session: ReadonlySession) => Promise<AstVerdict>;
};

const TEXT_PARAM = 'readonly_query_text';

/**
 * Runs one read-only SELECT given as text (an operator's, later a tenant's) with its
 * `{name:Type}` parameter values, inside the given limits; throws ReadonlyQueryRefused for a
 * query that is not exactly one harmless SELECT, or that fails. The guarantees, and which
 * mechanism gives each on chDB and on a server, are in docs/sql-safety.md:
 * 1. every statement runs on a read-only session (engine-enforced readonly = 1, no DDL, limits);
 * 2. the text reaches the engine only as a parameter value of ClickHouse's own single-statement
 *    formatter, `formatQuerySingleLine`, which refuses a second statement; only its output, one
 *    statement, is ever executed, wrapped as a subquery of `SELECT * … LIMIT`;
 * 3. that statement's parse tree (EXPLAIN AST) must be a plain SELECT without SETTINGS, with no
 *    table function or function that reaches files, the network, processes or dictionaries.
 */
export async function runReadonlyQuery(
  engine: ReadonlyEngine,
  text: string,
  params: Record<string, ParamValue>,
  limits: ReadonlyQueryLimits,
  options: ReadonlyQueryOptions = {},
): Promise<ReadonlyQueryResult> {
  // Binding the parameters is an engine step too: a value it refuses is the caller's 400, not a 500.
  const session = await engineStep(() => engine.open({ ...limits, maxResultRows: limits.maxRows + 1 }, params));
  try {
    return await withDeadline(checkedRun(engine, session, text, limits, options.check), limits.timeoutMs + (limits.graceMs ?? 1_000));
  } finally {
    session.close();
    options.onEngineIdle?.(session.idle());
  }
}

async function checkedRun(
  engine: ReadonlyEngine,
  session: ReadonlySession,
  text: string,
  limits: ReadonlyQueryLimits,
  check: ReadonlyQueryOptions['check'],
): Promise<ReadonlyQueryResult> {
  const statement = await checkedStatement(engine, session, await singleStatement(session, text), limits.maxRows + 1, check);
  const described = await engineStep(() => session.run(`DESCRIBE TABLE (${statement})`, 'JSONEachRow'));
  const columns = jsonLines<{ name: string; type: string }>(described).map(({ name, type }) => ({ name, type }));
  const output = await engineStep(() => session.runBounded(statement, limits.maxResultBytes));
  return { columns, ...rowsArray(output, limits.maxRows) };
}

/**
 * The one statement that will run for `single` (the engine's own print of one statement): wrapped
 * as `SELECT * FROM (…) LIMIT n`, shown to be a fixed point of the formatter, its parse tree
 * judged (judgeAst), then `check`. Throws ReadonlyQueryRefused otherwise.
 */
async function checkedStatement(
  engine: ReadonlyEngine,
  session: ReadonlySession,
  single: string,
  limit: number | undefined,
  check: ReadonlyQueryOptions['check'],
): Promise<string> {
  const statement = await singleStatement(session, `SELECT * FROM (${single})${limit === undefined ? '' : ` LIMIT ${limit}`}`);
  // The formatter's output must be a fixed point of the formatter: one statement, whatever it prints.
  if ((await singleStatement(session, statement)) !== statement)
    throw new ReadonlyQueryRefused('the query does not format to one statement', SYNTAX_ERROR);
  const ast = await engineStep(() => session.run(`EXPLAIN AST ${statement}`, 'JSONEachRow'));
  const astRows = jsonLines<{ explain: string }>(ast).map((row) => row.explain);
  const verdict = judgeAst(astRows, await tableFunctionsOf(engine, session));
  if (!verdict.ok) throw new ReadonlyQueryRefused(verdict.reason, verdict.code);
  if (check) {
    const narrowed = await engineStep(() => check(statement, astRows, session));
    if (!narrowed.ok) throw new ReadonlyQueryRefused(narrowed.reason, narrowed.code);
  }
  return statement;
}

const SYNTAX_ERROR = 62;

/** What the streamed path runs for a statement (ReadonlyStreamOptions.prepare). */
export type PreparedStatement =
  /** A SELECT of the caller's, checked as every read-only query is, output in `format`. */
  | { select: string; format: string }
  /** A statement the service wrote itself from fixed text (a DESCRIBE of an allowed table), run as is. */
  | { direct: string; format: string };

export type ReadonlyStreamOptions = Pick<ReadonlyQueryOptions, 'check' | 'onEngineIdle'> & {
  /**
   * Turns the engine's print of the one statement sent into what runs, on the query's session
   * (the ClickHouse interface: its FORMAT clause, SHOW and DESCRIBE). Throws ReadonlyQueryRefused.
   */
  prepare: (single: string, session: ReadonlySession) => Promise<PreparedStatement>;
  /** Aborted when the caller has gone: the query is cancelled in the engine. */
  signal?: AbortSignal;
};

/** A streamed result: its format and its output as the engine writes it. */
export type ReadonlyStream = {
  format: string;
  /** The output, piece by piece; the session is closed when the loop ends, however it ends. */
  pieces: AsyncIterable<Uint8Array>;
  /** What the engine has told of the statement so far (filled as the pieces come). */
  progress: StreamProgress;
};

/**
 * The streamed twin of runReadonlyQuery, for answers too large to hold (the ClickHouse interface):
 * the same session, the same single-statement formatter, the same wrapping and parse-tree checks,
 * then the statement's output in the engine's own format, yielded as it comes. Rows past
 * `maxRows` fail the query in the engine (max_result_rows, result_overflow_mode = 'throw'). The
 * wrapper has no LIMIT of its own here: formats that report it (JSON's rows_before_limit_at_least)
 * must show the query's, as a server would.
 * Everything before the first piece (the checks, a refusal by the engine) throws
 * ReadonlyQueryRefused; an error after it is thrown from the loop.
 */
export async function streamReadonlyQuery(
  engine: ReadonlyEngine,
  text: string,
  params: Record<string, ParamValue>,
  limits: ReadonlyQueryLimits,
  options: ReadonlyStreamOptions,
): Promise<ReadonlyStream> {
  // Two sessions with the same filters, limits and readonly: the checks run on the first, whose
  // row bound is the lane's (an EXPLAIN has more rows than a request's low max_result_rows); the
  // checked statement is read on the second, bound by `maxRows`.
  const checks = await engineStep(() => engine.open({ ...limits, maxResultRows: Math.max(limits.maxRows, CHECK_ROWS) }, params));
  let reader: ReadonlySession | undefined;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limits.timeoutMs + (limits.graceMs ?? 1_000));
  const signal = options.signal ? AbortSignal.any([options.signal, deadline.signal]) : deadline.signal;
  const finish = () => {
    clearTimeout(timer);
    checks.close();
    reader?.close();
    options.onEngineIdle?.(Promise.all([checks.idle(), reader?.idle()]).then(() => undefined));
  };
  try {
    const prepared = await withDeadline(
      (async () => {
        const single = await singleStatement(checks, text);
        const ready = await engineStep(() => options.prepare(single, checks));
        if ('direct' in ready) return { statement: ready.direct, format: ready.format };
        return {
          statement: await checkedStatement(engine, checks, ready.select, undefined, options.check),
          format: ready.format,
        };
      })(),
      limits.timeoutMs + (limits.graceMs ?? 1_000),
    );
    reader = await engineStep(() => engine.open({ ...limits, maxResultRows: limits.maxRows }, params));
    const progress: StreamProgress = { resultRows: 0, resultBytes: 0 };
    const source = reader.stream(prepared.statement, prepared.format, signal, progress);
    const pieces = (async function* () {
      try {
        for await (const piece of source) yield piece;
      } catch (error) {
        if (deadline.signal.aborted) throw new ReadonlyQueryRefused(`timed out after ${limits.timeoutMs} ms`, TIMEOUT_EXCEEDED);
        throw refusalOf(error);
      } finally {
        finish();
      }
    })();
    return { format: prepared.format, pieces, progress };
  } catch (error) {
    finish();
    throw error;
  }
}

/** Rows a check statement (EXPLAIN, the formatter) may answer at least. */
const CHECK_ROWS = 1_000_000;
const TIMEOUT_EXCEEDED = 159;

/**
 * JSONEachRow output (one object per line; JSON escapes every line break inside a value) as the
 * text of a JSON array of at most `maxRows` rows, in place: each line break between rows becomes
 * a comma. Only the line breaks are searched for, and the rows are never parsed.
 */
function rowsArray(output: Buffer, maxRows: number): { rowsJson: Buffer; rowCount: number; truncated: boolean } {
  const NEWLINE = 0x0a;
  const COMMA = 0x2c;
  let rowCount = 0;
  let truncated = false;
  let lastBreak = -1; // the line break that ends the last row kept
  for (let at = output.indexOf(NEWLINE); at !== -1; at = output.indexOf(NEWLINE, at + 1)) {
    if (rowCount === maxRows) {
      truncated = true; // the statement asks for one row more than is answered
      break;
    }
    if (lastBreak !== -1) output[lastBreak] = COMMA;
    lastBreak = at;
    rowCount += 1;
  }
  const rows = output.subarray(0, Math.max(lastBreak, 0));
  return { rowsJson: Buffer.concat([Buffer.from('['), rows, Buffer.from(']')]), rowCount, truncated };
}

/** ClickHouse's own parse of `text` as one statement, printed back; a second statement is an error. */
async function singleStatement(session: ReadonlySession, text: string): Promise<string> {
  const out = await engineStep(
    () => session.run(`SELECT formatQuerySingleLine({${TEXT_PARAM}:String}) AS q`, 'JSONEachRow', { [TEXT_PARAM]: text }),
    'not a single valid SELECT: ',
  );
  const [row] = jsonLines<{ q: string }>(out);
  if (!row) throw new ReadonlyQueryRefused('not a single valid SELECT');
  return row.q;
}

/** The engine's table functions (lower case), asked once per engine. */
const tableFunctionLists = new WeakMap<ReadonlyEngine, Promise<ReadonlySet<string>>>();
function tableFunctionsOf(engine: ReadonlyEngine, session: ReadonlySession): Promise<ReadonlySet<string>> {
  let list = tableFunctionLists.get(engine);
  if (!list) {
    list = session
      .run('SELECT lower(name) AS name FROM system.table_functions', 'JSONEachRow')
      .then((out) => new Set([...KNOWN_TABLE_FUNCTIONS, ...jsonLines<{ name: string }>(out).map((row) => row.name)]));
    tableFunctionLists.set(engine, list);
    list.catch(() => tableFunctionLists.delete(engine));
  }
  return list;
}

/** An engine error becomes a refusal with ClickHouse's first line (no stack, no server internals). */
async function engineStep<T>(step: () => Promise<T>, prefix = ''): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ReadonlyQueryRefused) throw error;
    if (error instanceof ReadonlyOutputTooLarge || /\bTOO_MANY_ROWS_OR_BYTES\b|Limit for result exceeded/.test(String(error))) {
      const maxBytes = error instanceof ReadonlyOutputTooLarge ? error.maxBytes : READONLY_RESULT_MAX_BYTES;
      throw new ReadonlyQueryRefused(`the result is larger than ${maxBytes / 1024 / 1024} MiB; select fewer rows or columns, or aggregate`);
    }
    throw refusalOf(error, prefix);
  }
}

/** An engine error as a refusal: its first line, and its code when it has ClickHouse's form. */
function refusalOf(error: unknown, prefix = ''): ReadonlyQueryRefused {
  if (error instanceof ReadonlyQueryRefused) return error;
  // A server's error as @clickhouse/client gives it: the message, with its code and name apart.
  const { code: given, type } = (error ?? {}) as { code?: unknown; type?: unknown };
  if (typeof given === 'string' && /^\d+$/.test(given) && typeof type === 'string' && /^[A-Z0-9_]+$/.test(type)) {
    const text = firstLine(error).replace(/\.?\s*$/, '');
    return new ReadonlyQueryRefused(`${prefix}Code: ${given}. DB::Exception: ${text}. (${type})`, Number(given));
  }
  const line = firstLine(error);
  const code = /\bCode: (\d+)\. /.exec(line)?.[1];
  return new ReadonlyQueryRefused(prefix + line, code === undefined ? undefined : Number(code));
}

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadonlyQueryRefused(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

/** Rows of a JSONEachRow answer. */
export function jsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).slice(0, 500);
}
