/**
 * ClickHouse error codes that mean "this data cannot be stored": the rows of the insert, not the
 * engine, are at fault, so inserting the same rows again fails the same way. Any other error
 * (unreachable, timeout, too many parts, memory) is the engine's, and the same batch may succeed
 * later. Names as in ClickHouse's ErrorCodes.cpp (checked with errorCodeToName in chDB).
 */
const DATA_ERROR_CODES = new Map<string, string>([
  ['6', 'CANNOT_PARSE_TEXT'],
  ['25', 'CANNOT_PARSE_ESCAPE_SEQUENCE'],
  ['26', 'CANNOT_PARSE_QUOTED_STRING'],
  ['27', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED'],
  ['38', 'CANNOT_PARSE_DATE'],
  ['41', 'CANNOT_PARSE_DATETIME'],
  ['53', 'TYPE_MISMATCH'],
  ['70', 'CANNOT_CONVERT_TYPE'],
  ['72', 'CANNOT_PARSE_NUMBER'],
  ['117', 'INCORRECT_DATA'],
  ['130', 'CANNOT_READ_ARRAY_FROM_TEXT'],
  ['131', 'TOO_LARGE_STRING_SIZE'],
  ['306', 'TOO_DEEP_RECURSION'],
  ['321', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE'],
  ['349', 'CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN'],
  ['376', 'CANNOT_PARSE_UUID'],
  ['441', 'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING'],
  ['467', 'CANNOT_PARSE_BOOL'],
  ['469', 'VIOLATED_CONSTRAINT'],
]);

/** A ClickHouse refusal of an insert's data: its code, name and message. */
export type DataError = { code: string; name: string; message: string };

/**
 * The data error an insert failed with, or null for any other failure. Decided by the numeric
 * code the client reports (`ClickHouseError.code`, from the server's exception or chDB's), never
 * by the message, whose wording changes between versions.
 */
export function insertDataError(error: unknown): DataError | null {
  if (error === null || typeof error !== 'object') return null;
  const { code, type, message } = error as { code?: unknown; type?: unknown; message?: unknown };
  if (typeof code !== 'string') return null;
  const name = DATA_ERROR_CODES.get(code);
  if (!name) return null;
  return {
    code,
    name: typeof type === 'string' && type !== '' ? type : name,
    message: typeof message === 'string' ? message : String(error),
  };
}
