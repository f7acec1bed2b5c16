import type { ClickHouseClient } from '../clickhouse.js';
import { type InsightScope, queryRows, scopeCondition, scopeParams, USER_ORDER_SETTINGS } from './query-rows.js';

/** The paths depth the API allows (docs/insights.md, "Paths"). */
export const MIN_PATH_DEPTH = 2;
export const MAX_PATH_DEPTH = 6;
/** How many whole paths an answer lists. */
export const TOP_PATHS = 10;

export type PathsQuery = {
  /** Paths start at each user's first event of this name; undefined: at their first event. */
  startEvent?: string | undefined;
  /** Paths end at each user's last event of this name (exclusive with startEvent). */
  endEvent?: string | undefined;
  /** At most this many names per path (2 to 6). */
  depth: number;
  /** Names left out of every path before anything else is done. */
  excludeEvents?: readonly string[] | undefined;
};

/** Users who moved from `from` (at position step - 1 of their path) to `to` (at position step). */
export type PathEdgeRow = { step: number; from: string; to: string; users: number };
export type PathRow = { events: string[]; users: number };
/** Every edge (unordered), the top paths, and how many users have a path. */
export type PathsResult = { edges: PathEdgeRow[]; paths: PathRow[]; users: number };

/**
 * User paths (docs/insights.md, "Paths"), in one scan of `events_by_user` grouped by user (a hash,
 * USER_ORDER_SETTINGS): per user, the names of their events in the window (scope and exclusions
 * applied) sorted by (time, name) as one number per event (time and the name's rank among the
 * window's names), so events at the same millisecond come in name order and a
 * repeated event sits beside its twin; cut at the first startEvent or after the last endEvent;
 * consecutive repeats collapsed; at most `depth` names kept (the first ones, or with endEvent the
 * last ones). Then one row per distinct path with its users, and from those in one more pass:
 * the edges (step, from, to) summed over paths, and the top paths by users, ties by the path's
 * names in byte order. Users without the start or end event have no path and are not counted.
 *
 * The depth is a validated integer, written into the query text.
 */
export async function paths(client: ClickHouseClient, scope: InsightScope, query: PathsQuery): Promise<PathsResult> {
  const depth = query.depth;
  if (!Number.isInteger(depth) || depth < MIN_PATH_DEPTH || depth > MAX_PATH_DEPTH) {
    throw new RangeError(`depth: ${MIN_PATH_DEPTH} to ${MAX_PATH_DEPTH}`);
  }
  if (query.startEvent !== undefined && query.endEvent !== undefined) throw new RangeError('a start event or an end event, not both');
  const params: Record<string, unknown> = { ...scopeParams(scope), excluded: [...(query.excludeEvents ?? [])] };
  // Names are carried as their rank in `dict`, the project's names in byte order (1, 2, …), so a
  // user's events are one UInt64 each, (ms since the window's start) << 24 | rank, sorted as
  // numbers: by time, then by name. Ranks come back to names at the end. `dict` comes from the
  // daily rollup's rows of the window's days (a few thousand rows, where the events' own names
  // cost a scan of the whole window: 0.3 s of CPU at 10 M events); a superset of the window's
  // names keeps the order of those present. An event whose name is not in it (its insert cut
  // before the rollup, until the repair) is left out.
  const code = (param: string) => `indexOf(dict, {${param}:String})`;
  // The user's names from the start event on, or up to and including the end event (0: none).
  let cut = 'names';
  if (query.startEvent !== undefined) {
    params.startEvent = query.startEvent;
    cut = `arraySlice(names, if(has(names, ${code('startEvent')}), indexOf(names, ${code('startEvent')}), length(names) + 1))`;
  } else if (query.endEvent !== undefined) {
    params.endEvent = query.endEvent;
    cut = `arraySlice(names, 1, arrayLastIndex(n -> n = ${code('endEvent')}, names))`;
  }
  // Repeats collapsed: a name is kept unless the one before it is the same (0 is no name's rank).
  const collapsed = 'arrayFilter((n, before) -> n != before, cut, arrayResize(arrayPushFront(cut, toUInt64(0)), length(cut)))';
  const kept =
    query.endEvent !== undefined
      ? `arraySlice(collapsed, greatest(1, length(collapsed) - ${depth - 1}))`
      : `arraySlice(collapsed, 1, ${depth})`;
  const where = `${scopeCondition(scope)} AND event_name NOT IN {excluded:Array(String)}`;
  const [row] = await queryRows<{ users: number; edges: [number, string, string, number][]; top: [number, string[]][] }>(
    client,
    `WITH (SELECT arraySort(groupUniqArray(toString(event_name))) FROM events_daily
           WHERE project_id = {projectId:UUID} AND day BETWEEN toDate({start:DateTime64(3, 'UTC')}, 'UTC') AND toDate({end:DateTime64(3, 'UTC')}, 'UTC')) AS dict
     SELECT users,
            arrayMap((k, v) -> (k.1, dict[k.2], dict[k.3], v), edge_users.1, edge_users.2) AS edges,
            arrayMap(x -> (x.1, arrayMap(c -> dict[c], x.2)), top_codes) AS top
     FROM (
       SELECT sum(path_users) AS users,
              sumMap(steps, arrayMap(s -> path_users, steps)) AS edge_users,
              arraySlice(arraySort(x -> (-x.1, x.2), groupArray((path_users, path))), 1, ${TOP_PATHS}) AS top_codes
       FROM (
         SELECT path, count() AS path_users,
                arrayMap(i -> (toUInt8(i + 1), path[i], path[i + 1]), range(1, length(path))) AS steps
         FROM (
           SELECT arrayMap(k -> bitAnd(k, 16777215), arraySort(groupArrayIf(
                    bitOr(bitShiftLeft(toUInt64(toUnixTimestamp64Milli(created_at) - toUnixTimestamp64Milli({start:DateTime64(3, 'UTC')})), 24), rank),
                    rank > 0))) AS names,
                  ${cut} AS cut,
                  ${collapsed} AS collapsed,
                  ${kept} AS path
           FROM (
             -- transform() looks a name up in a hash of dict; indexOf/has scanned dict per row
             -- (0.6 s of CPU per 10 M rows against 0.15 s, measured).
             SELECT user_id, created_at,
                    transform(toString(event_name), dict, arrayMap(i -> toUInt64(i), range(1, length(dict) + 1)), toUInt64(0)) AS rank
             FROM events_by_user
             WHERE ${where}
           )
           GROUP BY user_id
         )
         WHERE length(path) > 0
         GROUP BY path
       )
     )`,
    params,
    USER_ORDER_SETTINGS,
  );
  if (!row) return { edges: [], paths: [], users: 0 };
  return {
    users: Number(row.users),
    edges: row.edges.map(([step, from, to, users]) => ({ step: Number(step), from, to, users: Number(users) })),
    paths: row.top.map(([users, events]) => ({ events, users: Number(users) })),
  };
}
