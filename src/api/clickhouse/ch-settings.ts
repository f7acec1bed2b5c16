import { CH, chError } from './ch-errors.js';

/** What the settings of a request change: engine settings, and what the interface itself does. */
export type RequestSettings = {
  /** Output settings for the session (readonly-session.ts extraSettings): names and values checked here. */
  engine: Record<string, string>;
  /** max_execution_time, in milliseconds, when lower than the lane's. */
  timeoutMs: number | undefined;
  /** max_result_rows, when lower than the lane's. */
  maxRows: number | undefined;
  /** enable_http_compression=1. */
  compress: boolean;
  /** wait_end_of_query=1: hold the answer (up to a bound) so that an error still gets its status. */
  waitEndOfQuery: boolean;
  /** send_progress_in_http_headers=1: an X-ClickHouse-Progress header with the headers. */
  sendProgress: boolean;
};

/** Output settings a read may change: they shape how the engine writes, never what it reads. */
const OUTPUT_SETTING = /^(output_format_[a-z0-9_]+|format_csv_[a-z0-9_]+|format_tsv_[a-z0-9_]+|date_time_output_format|session_timezone)$/;

/**
 * Settings that only the HTTP layer reads, harmless for reads: accepted. send_progress_in_http_headers
 * sends one X-ClickHouse-Progress header, with the others (docs/clickhouse-interface.md).
 */
const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'send_progress_in_http_headers',
  'wait_end_of_query',
  'http_zlib_compression_level',
]);

/** Output settings that make the engine read or write files of the server: refused like any other. */
const FILE_SETTINGS = /(schema|template|_path|_file)/;

const isTrue = (value: string) => value === '1' || value.toLowerCase() === 'true';

/** The engine's settings as system.settings lists them: current value and type, by name. */
export type CurrentSettings = ReadonlyMap<string, { value: string; type: string }>;

/**
 * Settings the sandbox sets on every session (readonly-session.ts): their values there are not the
 * engine's defaults, so "the same value" is never judged against system.settings for them.
 */
const SANDBOX_SETTINGS = new Set([
  'readonly',
  'allow_ddl',
  'allow_introspection_functions',
  'max_execution_time',
  'max_result_rows',
  'max_result_bytes',
  'result_overflow_mode',
  'max_block_size',
  'max_threads',
  'max_memory_usage',
  'max_query_size',
  'additional_table_filters',
]);

/** True when `value` is what the setting already is: a read-only server lets a client "set" that. */
function sameValue(current: { value: string; type: string } | undefined, value: string): boolean {
  if (!current) return false;
  if (current.type === 'Bool') return isBoolean(value) && isTrue(value) === isTrue(current.value);
  if (/^-?\d+(\.\d+)?$/.test(current.value) && /^-?\d+(\.\d+)?$/.test(value)) return Number(current.value) === Number(value);
  return current.value === value;
}
const isBoolean = (value: string) => /^(0|1|true|false)$/i.test(value);

/**
 * Judges the settings of a request (URL parameters other than the handler's own): allowed are
 * output format settings, `max_result_rows` and `max_execution_time` when lower than the lane's,
 * and the HTTP layer's own. A setting given the value it already has (`current`, the engine's
 * system.settings; `readonly=1`, which every session has) is accepted and changes nothing, as a
 * read-only server accepts it: drivers send some defaults (`extremes=0`) on every request. Any
 * other setting, or one that would lift a limit, is refused with READONLY (164), as a read-only
 * server refuses it: `Cannot modify '<name>' setting in readonly mode`.
 */
export function judgeSettings(
  given: Record<string, string>,
  lane: { timeoutMs: number; maxRows: number },
  current: CurrentSettings = new Map(),
): RequestSettings {
  const result: RequestSettings = {
    engine: {},
    timeoutMs: undefined,
    maxRows: undefined,
    compress: false,
    waitEndOfQuery: false,
    sendProgress: false,
  };
  for (const [name, value] of Object.entries(given)) {
    if (OUTPUT_SETTING.test(name) && !FILE_SETTINGS.test(name)) {
      if (value.length > 256) throw refused(name);
      result.engine[name] = value;
    } else if (HTTP_SETTINGS.has(name)) {
      if (name === 'enable_http_compression') result.compress = isTrue(value);
      if (name === 'wait_end_of_query') result.waitEndOfQuery = isTrue(value);
      if (name === 'send_progress_in_http_headers') result.sendProgress = isTrue(value);
    } else if (name === 'max_execution_time') {
      const seconds = Number(value);
      if (!(seconds > 0) || seconds * 1000 > lane.timeoutMs) throw refused(name);
      result.timeoutMs = Math.round(seconds * 1000);
    } else if (name === 'max_result_rows') {
      const rows = Number(value);
      if (!Number.isInteger(rows) || rows < 1 || rows > lane.maxRows) throw refused(name);
      result.maxRows = rows;
    } else if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) {
      throw chError(CH.UNKNOWN_SETTING, `Unknown setting '${name.slice(0, 128)}'`);
    } else if (name === 'readonly' ? value === '1' : !SANDBOX_SETTINGS.has(name) && sameValue(current.get(name), value)) {
      // Already so: nothing to change, nothing passed to the engine.
    } else {
      throw refused(name);
    }
  }
  return result;
}

const refused = (name: string) => chError(CH.READONLY, `Cannot modify '${name}' setting in readonly mode`);
