/*
 * Errors of the ClickHouse interface in ClickHouse's own form, which clients parse: the
 * X-ClickHouse-Exception-Code header, a plain-text body `Code: <n>. DB::Exception: <message>.
 * (<NAME>) (version <v>)`, and the HTTP status ClickHouse gives for that code.
 */

/** The codes this service raises itself (ClickHouse's src/Common/ErrorCodes.cpp). */
export const CH = {
  SYNTAX_ERROR: { code: 62, name: 'SYNTAX_ERROR' },
  NOT_IMPLEMENTED: { code: 48, name: 'NOT_IMPLEMENTED' },
  UNKNOWN_TABLE: { code: 60, name: 'UNKNOWN_TABLE' },
  UNKNOWN_FORMAT: { code: 73, name: 'UNKNOWN_FORMAT' },
  UNKNOWN_DATABASE: { code: 81, name: 'UNKNOWN_DATABASE' },
  UNKNOWN_SETTING: { code: 115, name: 'UNKNOWN_SETTING' },
  TIMEOUT_EXCEEDED: { code: 159, name: 'TIMEOUT_EXCEEDED' },
  READONLY: { code: 164, name: 'READONLY' },
  QUOTA_EXCEEDED: { code: 201, name: 'QUOTA_EXCEEDED' },
  TOO_MANY_SIMULTANEOUS_QUERIES: { code: 202, name: 'TOO_MANY_SIMULTANEOUS_QUERIES' },
  TOO_MANY_ROWS_OR_BYTES: { code: 396, name: 'TOO_MANY_ROWS_OR_BYTES' },
  QUERY_WAS_CANCELLED: { code: 394, name: 'QUERY_WAS_CANCELLED' },
  ACCESS_DENIED: { code: 497, name: 'ACCESS_DENIED' },
  AUTHENTICATION_FAILED: { code: 516, name: 'AUTHENTICATION_FAILED' },
  BAD_ARGUMENTS: { code: 36, name: 'BAD_ARGUMENTS' },
  CANNOT_DECOMPRESS: { code: 271, name: 'CANNOT_DECOMPRESS' },
  CHECKSUM_DOESNT_MATCH: { code: 40, name: 'CHECKSUM_DOESNT_MATCH' },
  UNKNOWN_COMPRESSION_METHOD: { code: 89, name: 'UNKNOWN_COMPRESSION_METHOD' },
  UNKNOWN_QUERY_PARAMETER: { code: 456, name: 'UNKNOWN_QUERY_PARAMETER' },
  UNKNOWN_EXCEPTION: { code: 1002, name: 'UNKNOWN_EXCEPTION' },
} as const;

const NAMES_BY_CODE = new Map<number, string>(Object.values(CH).map(({ code, name }) => [code, name]));

/**
 * HTTP statuses by error name, as ClickHouse's exceptionCodeToHTTPStatus.cpp gives them; any
 * other code is a 500. Deliberate differences, each a refusal and not a fault: READONLY (164) is a
 * 403, as the issue that specified this interface asks; QUOTA_EXCEEDED (201, a spent rate limit)
 * and TOO_MANY_SIMULTANEOUS_QUERIES (202, the lane is full) are a 429, the status their
 * Retry-After belongs to and the one the JSON API gives the same refusals. ClickHouse's list leaves
 * these out, so a server answers them with 500 (an operator's 5xx alarm would count a busy lane
 * as a failure); clients read the code from X-ClickHouse-Exception-Code and the body, not from the
 * status, so none behaves differently.
 */
const STATUS_BY_NAME: Record<string, number> = {
  REQUIRED_PASSWORD: 401,
  ...Object.fromEntries(
    ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED', 'READONLY'].map((n) => [n, 403]),
  ),
  ...Object.fromEntries(
    [
      'BAD_ARGUMENTS',
      'CANNOT_COMPILE_REGEXP',
      'CANNOT_PARSE_TEXT',
      'CANNOT_PARSE_ESCAPE_SEQUENCE',
      'CANNOT_PARSE_QUOTED_STRING',
      'CANNOT_PARSE_DATE',
      'CANNOT_PARSE_DATETIME',
      'CANNOT_PARSE_NUMBER',
      'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
      'CANNOT_PARSE_IPV4',
      'CANNOT_PARSE_IPV6',
      'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
      'CANNOT_PARSE_UUID',
      'DUPLICATE_COLUMN',
      'ILLEGAL_COLUMN',
      'UNKNOWN_ELEMENT_IN_AST',
      'UNKNOWN_TYPE_OF_AST_NODE',
      'THERE_IS_NO_COLUMN',
      'TOO_DEEP_AST',
      'TOO_BIG_AST',
      'UNEXPECTED_AST_STRUCTURE',
      'SYNTAX_ERROR',
      'INCORRECT_DATA',
      'TYPE_MISMATCH',
      'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ].map((n) => [n, 400]),
  ),
  ...Object.fromEntries(
    [
      'UNKNOWN_TABLE',
      'UNKNOWN_FUNCTION',
      'UNKNOWN_IDENTIFIER',
      'UNKNOWN_TYPE',
      'UNKNOWN_STORAGE',
      'UNKNOWN_DATABASE',
      'UNKNOWN_SETTING',
      'UNKNOWN_DIRECTION_OF_SORTING',
      'UNKNOWN_AGGREGATE_FUNCTION',
      'UNKNOWN_FORMAT',
      'UNKNOWN_DATABASE_ENGINE',
      'UNKNOWN_TYPE_OF_QUERY',
      'UNKNOWN_ROLE',
    ].map((n) => [n, 404]),
  ),
  QUOTA_EXCEEDED: 429,
  TOO_MANY_SIMULTANEOUS_QUERIES: 429,
  QUERY_IS_TOO_LARGE: 413,
  NOT_IMPLEMENTED: 501,
  SOCKET_TIMEOUT: 503,
  CANNOT_OPEN_FILE: 503,
  HTTP_LENGTH_REQUIRED: 411,
  TIMEOUT_EXCEEDED: 408,
  CANNOT_SCHEDULE_TASK: 503,
  UNSUPPORTED_MEDIA_TYPE: 415,
};

/** An error to answer in ClickHouse's form. */
export class ClickhouseError extends Error {
  override name = 'ClickhouseError';
  constructor(
    readonly code: number,
    /** ClickHouse's name of the code (READONLY, …). */
    readonly codeName: string,
    /** The message after `DB::Exception: `, without the trailing `. (NAME)`. */
    readonly text: string,
    /** Extra response headers (Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`Code: ${code}. DB::Exception: ${text}. (${codeName})`);
  }

  get status(): number {
    return STATUS_BY_NAME[this.codeName] ?? 500;
  }

  /** The body a server writes: one line, with its version. */
  body(version: string): string {
    return `${this.message} (version ${version})\n`;
  }
}

export function chError(kind: { code: number; name: string }, text: string, headers: Record<string, string> = {}): ClickhouseError {
  return new ClickhouseError(kind.code, kind.name, text, headers);
}

/**
 * A message of the engine (`Code: 60. DB::Exception: Unknown table …. (UNKNOWN_TABLE)`, maybe
 * after a prefix of ours) or a refusal of the guard with its code, as a ClickhouseError.
 */
export function fromEngineMessage(message: string, code: number | undefined): ClickhouseError {
  const engine = /Code: (\d+)\. DB::Exception: (.*?)\.? \(([A-Z0-9_]+)\)(?: \(version [^)]*\))?\s*$/s.exec(message);
  if (engine) return new ClickhouseError(Number(engine[1]), engine[3] ?? 'UNKNOWN_EXCEPTION', engine[2] ?? '');
  const known = code === undefined ? undefined : NAMES_BY_CODE.get(code);
  if (code !== undefined && known) return new ClickhouseError(code, known, message);
  return chError(CH.ACCESS_DENIED, message);
}
