import type { ClickHouseClient } from '../clickhouse.js';
import { filterCondition } from '../filter-sql.js';
import type { FilterList } from '../filter-types.js';
import { chTime, type InsightScope, queryRows, scopeCondition, scopeParams, USER_ORDER_SETTINGS } from './query-rows.js';

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
  /** Only the events that pass these are part of a path, start and end events too (docs/metrics.md, "Filters"). */
  filters?: FilterList | undefined;
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
 * The most short users (below) whose rows are asked for again by themselves. Past it the second
 * query reads so much of the window that asking again for every row costs about the same, and a
 * list that long is a large parameter: the whole question is asked again with every event.
 */
export const MAX_SHORT_USERS = 10_000;

/**
 * For tests and measurements: how many earliest events the bounded gathering keeps per user
 * (default depth × BOUNDED_EVENTS_PER_NAME), null: every event, as with a start or end event;
 * `maxShortUsers`: MAX_SHORT_USERS.
 */
export type PathsOptions = { boundedEvents?: number | null | undefined; maxShortUsers?: number | undefined };

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
 * name repeated many times) is short: the first query counts them apart and names them, and a
 * second query reads only their rows (by user id, which the sort key of `events_by_user` reaches)
 * with every event kept. Their paths are added to the first query's: to its users and edges, and
 * to the counts of the top paths, for which the first query also returned every answered path
 * that begins with a short user's collapsed first events (every path of a short user begins with
 * those, so no count that a short user adds is missing). The answer never depends on K. What it
 * saves: BENCHMARKS.md, "Issue 30: insights at full speed"; the bench's "short users" case.
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
  if (!bounded) return (await pathsQuery(client, scope, query, { kind: 'all' })).result;
  const k = options.boundedEvents ?? depth * BOUNDED_EVENTS_PER_NAME;
  if (!Number.isInteger(k) || k < 1) throw new RangeError('boundedEvents: a positive integer');
  const maxShort = options.maxShortUsers ?? MAX_SHORT_USERS;
  const first = await pathsQuery(client, scope, query, { kind: 'bounded', k, maxShort });
  if (first.short.count === 0) return first.result;
  if (first.short.count > maxShort) return (await pathsQuery(client, scope, query, { kind: 'all' })).result;
  const again = await pathsQuery(client, scope, query, { kind: 'users', users: first.short.users });
  return mergeShortUsers(first, again.result);
}

/** Byte order of UTF-8 text, as ClickHouse compares strings (and the ranks of names follow). */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
/** Paths by users, most first; ties by the names, element by element, a shorter path first (as ClickHouse orders arrays). */
function pathOrder(a: PathRow, b: PathRow): number {
  if (a.users !== b.users) return b.users - a.users;
  for (let i = 0; i < Math.min(a.events.length, b.events.length); i++) {
    const c = byBytes(a.events[i] as string, b.events[i] as string);
    if (c !== 0) return c;
  }
  return a.events.length - b.events.length;
}

/**
 * The answer of the bounded query with the short users' own paths added (`short`, asked with
 * every event): users and edges add up; a path's count is its count among the answered users
 * (known for the top ones and for every path that begins like a short user's) plus the short users'.
 */
function mergeShortUsers(first: PathsAnswer, short: PathsResult): PathsResult {
  const edges = new Map<string, PathEdgeRow>();
  for (const edge of [...first.result.edges, ...short.edges]) {
    const key = JSON.stringify([edge.step, edge.from, edge.to]);
    const known = edges.get(key);
    edges.set(key, known ? { ...known, users: known.users + edge.users } : edge);
  }
  const counts = new Map<string, PathRow>();
  for (const path of [...first.result.paths, ...first.short.candidates]) counts.set(JSON.stringify(path.events), path);
  for (const path of short.paths) {
    const key = JSON.stringify(path.events);
    const known = counts.get(key);
    counts.set(key, known ? { events: path.events, users: known.users + path.users } : path);
  }
  return {
    users: first.result.users + short.users,
    edges: [...edges.values()],
    paths: [...counts.values()].sort(pathOrder).slice(0, TOP_PATHS),
  };
}

/**
 * Which of each user's events a paths query gathers: all of them; the K earliest (the users it
 * cannot answer so are counted and named, up to `maxShort` of them); or all of them for the named
 * users only, reached by the sort key, every one of their paths listed.
 */
type Gathering = { kind: 'all' } | { kind: 'bounded'; k: number; maxShort: number } | { kind: 'users'; users: readonly ShortUser[] };

/**
 * A user the bounded gathering could not answer, by what the first query has at no cost: their
 * user_key (as decimal text) and the time of their first event (ms since the window's start).
 */
type ShortUser = { key: string; firstMs: number };

/**
 * One paths query's answer. `short`: the users the bounded gathering could not answer (always none
 * without it): how many, and who (when at most maxShort), and every answered path that begins
 * with one of their collapsed first events, with its users.
 */
type PathsAnswer = { result: PathsResult; short: { count: number; users: ShortUser[]; candidates: PathRow[] } };

async function pathsQuery(client: ClickHouseClient, scope: InsightScope, query: PathsQuery, gathering: Gathering): Promise<PathsAnswer> {
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
  // Per user, the path. A user the bounded gathering cannot answer (short) gets instead the mark
  // 0 (no name's rank) followed by their collapsed first events, and how to find them again.
  // Their user_id would be the way the sort key reaches them, but reading that column cost 300 ms
  // of CPU per 10 M rows (measured), a third more than the whole bounded query; their key and the
  // time of their first event are already at hand, and lead to the id by one month's times.
  const bounded = gathering.kind === 'bounded' ? gathering.k : null;
  const perUser =
    bounded === null
      ? `arrayMap(k -> bitAnd(k, ${mask}), arraySort(groupArrayIf(${packed}, rank > 0))) AS names,
         ${cut} AS cut,
         ${collapsed} AS collapsed,
         ${kept} AS path`
      : `groupArraySortedIf(${bounded})(${packed}, rank > 0) AS first_events,
         arrayMap(k -> bitAnd(k, ${mask}), first_events) AS names,
         ${cut} AS cut,
         ${collapsed} AS collapsed,
         countIf(rank > 0) > ${bounded} AND length(collapsed) < ${depth} AS is_short,
         if(is_short, arrayPushFront(collapsed, toUInt64(0)), ${kept}) AS path,
         if(is_short, (toString(user_key), bitShiftRight(first_events[1], ${RANK_BITS})), ('', toUInt64(0))) AS short_user`;
  const excluded = (query.excludeEvents ?? []).length > 0 ? 'AND event_name NOT IN {excluded:Array(String)}' : '';
  const filters = filterCondition(query.filters ?? [], { properties: 'raw', prefix: 'f' });
  Object.assign(params, filters.params);
  const filtered = (query.filters ?? []).length > 0 ? `AND ${filters.sql}` : '';
  let users = '';
  if (gathering.kind === 'users') {
    // The short users' ids: the rows at their first events' times (the partitions of those months
    // only) whose key is theirs; then every row of theirs in the window, through the sort key.
    params.shortKeys = gathering.users.map((u) => u.key);
    params.shortFirsts = gathering.users.map((u) => chTime(new Date(scope.start.getTime() + u.firstMs)));
    users = `AND user_id IN (SELECT user_id FROM events_by_user
                             WHERE project_id = {projectId:UUID} AND created_at IN {shortFirsts:Array(DateTime64(3, 'UTC'))}
                               AND toString(user_key) IN {shortKeys:Array(String)})`;
  }
  // The short users, at most maxShort + 1 of them (one more says there are too many).
  const maxIds = gathering.kind === 'bounded' ? gathering.maxShort + 1 : 0;
  // A short user's paths all begin with their collapsed first events: the answered paths that
  // begin with one of those are returned with their users (none when nobody is short).
  const candidates =
    bounded === null
      ? 'arraySlice(sorted, 1, 0)'
      : 'arrayFilter(x -> arrayExists(p -> arraySlice(x.2, 1, length(p)) = p, prefixes), sorted)';
  // The named users' every path (at most one per user); else the top ones.
  const top = gathering.kind === 'users' ? 'sorted' : `arraySlice(sorted, 1, ${TOP_PATHS})`;
  const [row] = await queryRows<{
    users: number;
    short_count: number;
    short_users: [string, number][];
    edges: [number, string, string, number][];
    top: [number, string[]][];
    candidates: [number, string[]][];
  }>(
    client,
    `WITH (SELECT arraySort(groupUniqArray(toString(event_name))) FROM events_daily
           WHERE project_id = {projectId:UUID} AND day BETWEEN toDate({start:DateTime64(3, 'UTC')}, 'UTC') AND toDate({end:DateTime64(3, 'UTC')}, 'UTC')) AS dict,
          arrayMap(n -> cityHash64(n), dict) AS dict_hashes,
          length(arrayDistinct(dict_hashes)) = length(dict) AS hashes_distinct,
          arrayMap(i -> toUInt64(i), range(1, length(dict) + 1)) AS ranks
     SELECT users, short_count, arraySlice(every_short_user, 1, ${maxIds}) AS short_users,
            arrayMap((k, v) -> (k.1, dict[k.2], dict[k.3], v), edge_users.1, edge_users.2) AS edges,
            arrayMap(x -> (x.1, arrayMap(c -> dict[c], x.2)), top_codes) AS top,
            arrayMap(x -> (x.1, arrayMap(c -> dict[c], x.2)), candidate_codes) AS candidates
     FROM (
       SELECT sumIf(path_users, path[1] != 0) AS users,
              sumIf(path_users, path[1] = 0) AS short_count,
              arrayFlatten(groupArrayIf(short_path_users, path[1] = 0)) AS every_short_user,
              groupArrayIf(arrayPopFront(path), path[1] = 0) AS prefixes,
              sumMap(steps, arrayMap(s -> path_users, steps)) AS edge_users,
              arraySort(x -> (-x.1, x.2), groupArrayIf((path_users, path), path[1] != 0)) AS sorted,
              ${top} AS top_codes,
              ${candidates} AS candidate_codes
       FROM (
         SELECT path, count() AS path_users,
                ${bounded === null ? "CAST([], 'Array(Tuple(String, UInt64))')" : `groupArrayIf(${maxIds})(short_user, path[1] = 0)`} AS short_path_users,
                if(path[1] = 0, [], arrayMap(i -> (toUInt8(i + 1), path[i], path[i + 1]), range(1, length(path)))) AS steps
         FROM (
           SELECT ${perUser}
           FROM (
             -- transform() looks a name up in a hash of dict; indexOf/has scanned dict per row
             -- (0.6 s of CPU per 10 M rows against 0.15 s, measured). Looking up the name's
             -- cityHash64 among those of dict instead cost 0.2 s less CPU per 10 M rows than
             -- looking up the string (1.0 s against 1.2 s for the rank alone, measured): the hash
             -- of a LowCardinality column is taken once per distinct name, and the lookup is of a
             -- number. When two names of dict share a hash (never seen, checked per query) the
             -- strings are looked up; the condition is a constant, so one branch runs.
             SELECT user_key, created_at,
                    if(hashes_distinct, transform(cityHash64(event_name), dict_hashes, ranks, toUInt64(0)),
                       transform(event_name, dict, ranks, toUInt64(0))) AS rank
             FROM events_by_user
             WHERE ${scopeCondition(scope)} ${excluded} ${filtered} ${users}
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
  const toPaths = (rows: [number, string[]][]) => rows.map(([n, events]) => ({ events, users: Number(n) }));
  if (!row) return { result: { edges: [], paths: [], users: 0 }, short: { count: 0, users: [], candidates: [] } };
  return {
    short: {
      count: Number(row.short_count),
      users: row.short_users.map(([key, firstMs]) => ({ key, firstMs: Number(firstMs) })),
      candidates: toPaths(row.candidates),
    },
    result: {
      users: Number(row.users),
      edges: row.edges.map(([step, from, to, n]) => ({ step: Number(step), from, to, users: Number(n) })),
      paths: toPaths(row.top),
    },
  };
}
