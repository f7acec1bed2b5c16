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
 * How many of a user's earliest events the bounded gathering keeps, per name of `depth`. With no
 * start or end event a path is the first `depth` names of the user's collapsed events, and those
 * are already in the first events whenever those hold `depth` different runs (below).
 */
export const BOUNDED_EVENTS_PER_NAME = 4;

/**
 * For tests and measurements: how many earliest events the bounded gathering keeps per user
 * (default depth × BOUNDED_EVENTS_PER_NAME); null: every event, as with a start or end event.
 */
export type PathsOptions = { boundedEvents?: number | null | undefined };

/** A path rank no name has (ranks start at 1): the mark of a user the bounded gathering could not answer. */
const NOT_ANSWERED = 'toUInt64(0)';
/** Bits of a path event below its time: the rank of its name. */
const RANK_BITS = 24;

/**
 * User paths (docs/insights.md, "Paths"), in one scan of `events_by_user` grouped by user (a hash
 * on the fixed-width user_key, USER_ORDER_SETTINGS): per user, the names of their events in the
 * window (scope and exclusions applied) sorted by (time, name) as one number per event (time and
 * the name's rank among the window's names), so events at the same millisecond come in name order
 * and a repeated event sits beside its twin; cut at the first startEvent or after the last
 * endEvent; consecutive repeats collapsed; at most `depth` names kept (the first ones, or with
 * endEvent the last ones). Then one row per distinct path with its users, and from those in one
 * more pass: the edges (step, from, to) summed over paths, and the top paths by users, ties by the
 * path's names in byte order. Users without the start or end event have no path and are not counted.
 *
 * With neither a start nor an end event, each user keeps only their K earliest events
 * (groupArraySorted, K = depth × BOUNDED_EVENTS_PER_NAME) instead of all of them. That is exact
 * for every user with at most K events, and for every user whose K earliest events collapse to
 * at least `depth` names: collapsing a prefix of the sorted events gives a prefix of the collapsed
 * events. Any other user (more than K events, and fewer than `depth` runs among the first K: one
 * name repeated many times) makes the answer be asked again with every event kept, so the answer
 * never depends on K. What it saves: BENCHMARKS.md, "Issue 30: insights at full speed".
 *
 * The depth is a validated integer, written into the query text.
 */
export async function paths(
  client: ClickHouseClient,
  scope: InsightScope,
  query: PathsQuery,
  options: PathsOptions = {},
): Promise<PathsResult> {
  const depth = query.depth;
  if (!Number.isInteger(depth) || depth < MIN_PATH_DEPTH || depth > MAX_PATH_DEPTH) {
    throw new RangeError(`depth: ${MIN_PATH_DEPTH} to ${MAX_PATH_DEPTH}`);
  }
  if (query.startEvent !== undefined && query.endEvent !== undefined) throw new RangeError('a start event or an end event, not both');
  const bounded = query.startEvent === undefined && query.endEvent === undefined && options.boundedEvents !== null;
  if (bounded) {
    const k = options.boundedEvents ?? depth * BOUNDED_EVENTS_PER_NAME;
    if (!Number.isInteger(k) || k < 1) throw new RangeError('boundedEvents: a positive integer');
    const answer = await pathsQuery(client, scope, query, k);
    if (answer.unanswered === 0) return answer.result;
  }
  return (await pathsQuery(client, scope, query, null)).result;
}

/**
 * One paths query: with `bounded` (K) each user's K earliest events, else all of them. Returns the
 * answer and how many users the bounded gathering could not answer (always 0 without it).
 */
async function pathsQuery(
  client: ClickHouseClient,
  scope: InsightScope,
  query: PathsQuery,
  bounded: number | null,
): Promise<{ result: PathsResult; unanswered: number }> {
  const depth = query.depth;
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
  const packed = `bitOr(bitShiftLeft(toUInt64(toUnixTimestamp64Milli(created_at) - toUnixTimestamp64Milli({start:DateTime64(3, 'UTC')})), ${RANK_BITS}), rank)`;
  const mask = 2 ** RANK_BITS - 1;
  // Per user, the path; a user the bounded gathering cannot answer gets the path [0] instead.
  const perUser =
    bounded === null
      ? `arrayMap(k -> bitAnd(k, ${mask}), arraySort(groupArrayIf(${packed}, rank > 0))) AS names,
         ${cut} AS cut,
         ${collapsed} AS collapsed,
         ${kept} AS path`
      : `arrayMap(k -> bitAnd(k, ${mask}), groupArraySortedIf(${bounded})(${packed}, rank > 0)) AS names,
         ${cut} AS cut,
         ${collapsed} AS collapsed,
         if(countIf(rank > 0) > ${bounded} AND length(collapsed) < ${depth}, [${NOT_ANSWERED}], ${kept}) AS path`;
  const excluded = (query.excludeEvents ?? []).length > 0 ? 'AND event_name NOT IN {excluded:Array(String)}' : '';
  const [row] = await queryRows<{
    users: number;
    unanswered: number;
    edges: [number, string, string, number][];
    top: [number, string[]][];
  }>(
    client,
    `WITH (SELECT arraySort(groupUniqArray(toString(event_name))) FROM events_daily
           WHERE project_id = {projectId:UUID} AND day BETWEEN toDate({start:DateTime64(3, 'UTC')}, 'UTC') AND toDate({end:DateTime64(3, 'UTC')}, 'UTC')) AS dict
     SELECT users, unanswered,
            arrayMap((k, v) -> (k.1, dict[k.2], dict[k.3], v), edge_users.1, edge_users.2) AS edges,
            arrayMap(x -> (x.1, arrayMap(c -> dict[c], x.2)), top_codes) AS top
     FROM (
       SELECT sumIf(path_users, path[1] != 0) AS users,
              sumIf(path_users, path[1] = 0) AS unanswered,
              sumMap(steps, arrayMap(s -> path_users, steps)) AS edge_users,
              arraySlice(arraySort(x -> (-x.1, x.2), groupArrayIf((path_users, path), path[1] != 0)), 1, ${TOP_PATHS}) AS top_codes
       FROM (
         SELECT path, count() AS path_users,
                arrayMap(i -> (toUInt8(i + 1), path[i], path[i + 1]), range(1, length(path))) AS steps
         FROM (
           SELECT ${perUser}
           FROM (
             -- transform() looks a name up in a hash of dict; indexOf/has scanned dict per row
             -- (0.6 s of CPU per 10 M rows against 0.15 s, measured). Given the LowCardinality
             -- column itself, not toString() of it, the same scan cost 160 ms of CPU against 183.
             SELECT user_key, created_at,
                    transform(event_name, dict, arrayMap(i -> toUInt64(i), range(1, length(dict) + 1)), toUInt64(0)) AS rank
             FROM events_by_user
             WHERE ${scopeCondition(scope)} ${excluded}
           )
           GROUP BY user_key
         )
         WHERE length(path) > 0
         GROUP BY path
       )
     )`,
    params,
    USER_ORDER_SETTINGS,
  );
  if (!row) return { result: { edges: [], paths: [], users: 0 }, unanswered: 0 };
  return {
    unanswered: Number(row.unanswered),
    result: {
      users: Number(row.users),
      edges: row.edges.map(([step, from, to, users]) => ({ step: Number(step), from, to, users: Number(users) })),
      paths: row.top.map(([users, events]) => ({ events, users: Number(users) })),
    },
  };
}
