import type { ClickHouseClient } from '../clickhouse.js';
import { MAX_PATH_KEYS, PROPERTY_KEY } from '../filter-sql.js';
import { queryRows } from '../query-rows.js';
import { type NameFilter, nameCondition, type Scope, scopeParams } from './metrics.queries.js';

/** The most property paths one answer lists (the most frequent first). */
export const MAX_LISTED_PATHS = 100;
/** The most values listed per path (the most frequent first). */
export const TOP_VALUES = 10;

export type PathRow = { path: string; types: string[]; events: number };

/**
 * The property paths of the events in scope, with the JSON column's types of each and the number
 * of events that hold it: JSONAllPathsWithTypes reads the paths of each row from the column's own
 * structure (its dynamic paths and shared data), never the JSON text. Nested keys are paths
 * `a.b`; objects have no path of their own.
 */
export async function propertyPaths(client: ClickHouseClient, scope: Scope, names: NameFilter): Promise<PathRow[]> {
  const rows = await queryRows<PathRow>(
    client,
    `SELECT kv.1 AS path, groupUniqArray(kv.2) AS types, count() AS events
     FROM events
     ARRAY JOIN CAST(JSONAllPathsWithTypes(properties), 'Array(Tuple(String, String))') AS kv
     WHERE project_id = {projectId:UUID}
       AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')} ${nameCondition(names)}
     GROUP BY path
     ORDER BY events DESC, path
     LIMIT {limit:UInt32}`,
    { ...scopeParams(scope), names: names ?? [], limit: MAX_LISTED_PATHS },
  );
  return rows.map((row) => ({ ...row, events: Number(row.events) }));
}

export type TopValueRow = { path_index: number; type: string; value: string; count: number };

/** The keys of a path that a filter can name (PROPERTY_KEY), or undefined. */
export function filterableKeys(path: string): string[] | undefined {
  const keys = path.split('.');
  return keys.length <= MAX_PATH_KEYS && keys.every((key) => PROPERTY_KEY.test(key)) ? keys : undefined;
}

/**
 * The most frequent scalar values of each path, in one pass: every row contributes a (path, type,
 * text) tuple per path it holds, and LIMIT BY keeps each path's top values. The paths are
 * identifiers (properties.`a`.`b`), from keys that matched PROPERTY_KEY: filter-sql.ts says why a
 * sub-column is named, not bound.
 */
export async function topValues(client: ClickHouseClient, scope: Scope, names: NameFilter, paths: string[][]): Promise<TopValueRow[]> {
  if (paths.length === 0) return [];
  const tuples = paths.map((keys, i) => {
    for (const key of keys) if (!PROPERTY_KEY.test(key)) throw new Error('event-properties: unvalidated key');
    const column = `properties.${keys.map((key) => `\`${key}\``).join('.')}`;
    return `tuple(${i}, dynamicType(${column}), toString(${column}))`;
  });
  const rows = await queryRows<TopValueRow>(
    client,
    `SELECT v.1 AS path_index, v.2 AS type, v.3 AS value, count() AS count
     FROM events
     ARRAY JOIN arrayFilter(t -> t.2 != 'None' AND NOT startsWith(t.2, 'Array'), [${tuples.join(', ')}]) AS v
     WHERE project_id = {projectId:UUID}
       AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')} ${nameCondition(names)}
     GROUP BY path_index, type, value
     ORDER BY path_index, count DESC, value
     LIMIT {top:UInt32} BY path_index`,
    { ...scopeParams(scope), names: names ?? [], top: TOP_VALUES },
  );
  return rows.map((row) => ({ ...row, path_index: Number(row.path_index), count: Number(row.count) }));
}
