import { ReadonlyQueryRefused } from './readonly-query.js';

/*
 * Engine errors a tenant meets first, answered with the fix that works here (docs/project-sql.md,
 * "Properties"). ClickHouse's own advice for them names a setting the read-only session refuses.
 */

/** ClickHouse refusing a JSON path (a Dynamic value) as a GROUP BY or ORDER BY key. */
const DYNAMIC_KEY =
  /Data types Variant\/Dynamic are not allowed in ([A-Z ]+|window) keys[\s\S]*?(?:in order to allow it\.?|(?= \([A-Z_]+\)$)|$)/;

const DYNAMIC_HINT =
  'A property is a JSON path of no fixed type: give it one, e.g. properties.country::String (or toString(properties.country), properties.plan::Int64)';

/** `error` with the fix hint of a known engine error in its message; any other error as it was. */
export function withEngineHint(error: unknown): unknown {
  if (!(error instanceof ReadonlyQueryRefused)) return error;
  const match = DYNAMIC_KEY.exec(error.message);
  if (!match) return error;
  const message = error.message.replace(DYNAMIC_KEY, `Data types Variant/Dynamic are not allowed in ${match[1]} keys. ${DYNAMIC_HINT}.`);
  return new ReadonlyQueryRefused(message, error.code);
}
