import type { ClickHouseClient } from '../clickhouse.js';
import { filterCondition } from '../filter-sql.js';
import type { FilterList } from '../filter-types.js';
import { type InsightScope, propertyText, queryRows, scopeCondition, scopeParams, USER_ORDER_SETTINGS } from './query-rows.js';

/** A property value a funnel step can require (JSON scalars; equality only). */
export type PropertyValue = string | number | boolean;

/**
 * One step: an event name, top-level properties the event must carry with these values (`where`,
 * a shorthand for `eq` filters), and filters of the language (docs/metrics.md, "Filters").
 */
export type FunnelStep = {
  eventName: string;
  where?: Readonly<Record<string, PropertyValue>> | undefined;
  filters?: FilterList | undefined;
};

export type FunnelQuery = {
  steps: readonly FunnelStep[];
  /** How long after a user's step 1 the later steps may happen, in milliseconds (inclusive). */
  windowMs: number;
  /** Top-level property whose values split the funnel; undefined: one funnel. */
  breakdown?: string | undefined;
  /** Filters every step's events must pass (docs/metrics.md, "Filters"); none: every event. */
  filters?: FilterList | undefined;
};

/**
 * Per breakdown value (null when not split, or the property is missing): for each step k
 * (index k-1), the users who reached it, and the exact median of their milliseconds from step 1
 * to their first completion of step k (null when nobody reached it; 0 for step 1).
 */
export type FunnelRow = { breakdown: string | null; users: number[]; median_ms: (number | null)[] };

/** windowFunnel keeps at most 32 conditions; the API allows 10 steps. */
export const MAX_FUNNEL_STEPS = 10;
/** Bits of a match's step number (1 to MAX_FUNNEL_STEPS) below its time. */
const STEP_BITS = 4;

/**
 * The condition of step `i`, with its values as parameters named after the step and property
 * positions (never after request text). A `where` string must be a JSON string equal to it, a
 * number a JSON number equal to it, a boolean a JSON boolean; the step's filters are compiled
 * with parameters of their own (`s<i>f0`, …).
 */
function stepCondition(step: FunnelStep, i: number, params: Record<string, unknown>): string {
  params[`s${i}`] = step.eventName;
  const parts = [`event_name = {s${i}:String}`];
  Object.entries(step.where ?? {}).forEach(([key, value], j) => {
    const k = `s${i}k${j}`;
    const v = `s${i}v${j}`;
    params[k] = key;
    if (typeof value === 'string') {
      params[v] = value;
      parts.push(`JSONType(properties_raw, {${k}:String}) = 'String' AND JSONExtractString(properties_raw, {${k}:String}) = {${v}:String}`);
    } else if (typeof value === 'number') {
      params[v] = value;
      parts.push(
        `JSONType(properties_raw, {${k}:String}) IN ('Int64', 'UInt64', 'Double') AND JSONExtractFloat(properties_raw, {${k}:String}) = {${v}:Float64}`,
      );
    } else {
      params[v] = value ? 1 : 0;
      parts.push(`JSONType(properties_raw, {${k}:String}) = 'Bool' AND JSONExtractBool(properties_raw, {${k}:String}) = {${v}:UInt8}`);
    }
  });
  if ((step.filters ?? []).length > 0) {
    const filters = filterCondition(step.filters ?? [], { properties: 'raw', prefix: `s${i}f` });
    Object.assign(params, filters.params);
    parts.push(filters.sql);
  }
  return `(${parts.join(' AND ')})`;
}

/**
 * The funnel of one project (docs/insights.md, "Funnel"): per user, the level (the longest prefix
 * of steps done in order, times non-decreasing, one event matching consecutive steps, the last
 * step at most `windowMs` after the first) and the time to convert to each step reached. Both come
 * from one replay of ClickHouse's windowFunnel scan (default mode) over the user's matches sorted
 * by (time, step), as windowFunnel sorts them: for each step the latest start of a chain that
 * reached it, and when each step was first reached and from which start. windowFunnel itself
 * returns only the level, and running it beside the replay kept every user's events twice (1.2 to
 * 3 times slower in the same runs); the property test checks the replay's levels against the
 * definition.
 *
 * What keeps it fast over a year of events (BENCHMARKS.md, "Insights"):
 * - the rows come from `events_by_user`, the events in (project, user, time) order and a third of
 *   the width of `events`, grouped by user with a hash (USER_ORDER_SETTINGS: in order measured
 *   slower) on the fixed-width `user_key` (sql/clickhouse/010), and by the breakdown only when
 *   there is one; a user's rows arrive together;
 * - only the rows of the step names in the window are read (the project through the sort key,
 *   the months through the partitions);
 * - per match only its time and step are kept, packed in one UInt64, gathered by one groupArrayIf
 *   (one per step when two steps share a name; an array of matches built per row cost a fifth
 *   more CPU, measured);
 * - the replay is one pass of array functions per step over all users at once, not an arrayFold,
 *   which evaluates its lambda once per element (ten times slower, measured).
 *
 * The window is a validated integer, written into the query text.
 */
export async function funnel(client: ClickHouseClient, scope: InsightScope, query: FunnelQuery): Promise<FunnelRow[]> {
  const n = query.steps.length;
  if (n < 2 || n > MAX_FUNNEL_STEPS) throw new RangeError(`a funnel has 2 to ${MAX_FUNNEL_STEPS} steps`);
  if (!Number.isSafeInteger(query.windowMs) || query.windowMs < 0) throw new RangeError('windowMs must be a non-negative integer');
  const stepNames = new Set(query.steps.map((s) => s.eventName));
  const params: Record<string, unknown> = { ...scopeParams(scope), stepNames: [...stepNames] };
  const conditions = query.steps.map((step, i) => stepCondition(step, i, params));
  // The request's filters narrow the rows read, before any step is matched.
  const filters = filterCondition(query.filters ?? [], { properties: 'raw', prefix: 'f' });
  Object.assign(params, filters.params);
  const filtered = (query.filters ?? []).length > 0 ? `AND ${filters.sql}` : '';
  // Split: the breakdown is read per row and is part of the GROUP BY. Not split: the GROUP BY is
  // the user alone (a fixed-width key), and the breakdown a constant NULL added after it.
  const split = query.breakdown !== undefined;
  if (split) params.breakdownKey = query.breakdown;
  const rowBreakdown = split ? `, ${propertyText('breakdownKey')} AS breakdown` : '';
  const userBreakdown = split ? 'breakdown' : "CAST(NULL, 'Nullable(String)') AS breakdown";
  const w = query.windowMs;
  const steps = Array.from({ length: n }, (_, i) => i + 1);
  // A user's matches as one UInt64 each, (ms since the epoch) << 4 | step (ms < 2^53, a step < 16),
  // sorted as numbers: by time, then step, as windowFunnel sorts its events. No array is built per
  // row. When the steps' names are all different an event can match one step only (the one of its
  // name), so one groupArray gathers every match with its step; otherwise one groupArrayIf per
  // step (an event matching two steps is two matches), which cost 409 ms of CPU against 312 for
  // the single one over the 2.2 M rows of the bench's funnel (BENCHMARKS.md).
  const distinctNames = stepNames.size === n;
  const matches = distinctNames
    ? `arraySort(groupArrayIf(bitOr(bitShiftLeft(ts, ${STEP_BITS}), step), step > 0))`
    : `arraySort(arrayConcat(${steps.map((k) => `groupArrayIf(bitOr(bitShiftLeft(ts, ${STEP_BITS}), ${k}), c${k})`).join(', ')}))`;
  const rowStep = distinctNames ? `, multiIf(${steps.map((k) => `c${k}, ${k}`).join(', ')}, 0) AS step` : '';
  // The replay, one array pass per step. starts_k[p]: the latest start (ms) of a chain that had
  // reached step k at position p of the matches, -1 before any. A step-k match at p reaches step k
  // from starts_{k-1}[p-1] when it lies within the window of that start. Starts never decrease
  // along the scan, so the latest one is the last reach carried forward (arrayFill). done_k: the
  // milliseconds from its start when step k was first reached, -1 if never.
  const replay = [
    `arrayMap(x -> toInt64(bitShiftRight(x, ${STEP_BITS})), m) AS m_t`,
    `arrayMap(x -> toUInt8(bitAnd(x, ${2 ** STEP_BITS - 1})), m) AS m_k`,
    'arrayFill(v -> v >= 0, arrayMap((t, j) -> if(j = 1, t, toInt64(-1)), m_t, m_k)) AS starts_1',
  ];
  for (let k = 2; k <= n; k++) {
    replay.push(
      `arrayMap((t, j, s) -> if(j = ${k} AND s >= 0 AND t <= s + ${w}, s, toInt64(-1)), m_t, m_k,
                arrayShiftRight(starts_${k - 1}, 1, toInt64(-1))) AS reach_${k}`,
      `arrayFill(v -> v >= 0, reach_${k}) AS starts_${k}`,
      `arrayFirstIndex(v -> v >= 0, reach_${k}) AS first_${k}`,
      `if(first_${k} = 0, toInt64(-1), m_t[first_${k}] - reach_${k}[first_${k}]) AS done_${k}`,
    );
  }
  // The user's level: step 1 reached by any step-1 match, each later step by its first reach.
  const level = ['toUInt8(arrayExists(v -> v >= 0, starts_1))', ...steps.slice(1).map((k) => `toUInt8(done_${k} >= 0)`)].join(' + ');
  const rows = await queryRows<{ breakdown: string | null; users: number[]; median_ms: (number | null)[] }>(
    client,
    `SELECT breakdown,
            [${steps.map((k) => `countIf(level >= ${k})`).join(', ')}] AS users,
            [0, ${steps
              .slice(1)
              .map((k) => `if(countIf(level >= ${k}) = 0, NULL, quantileExactInclusiveIf(0.5)(done_${k}, level >= ${k}))`)
              .join(', ')}] AS median_ms
     FROM (
       SELECT breakdown, ${level} AS level,
              ${replay.join(',\n              ')}
       FROM (
         SELECT ${userBreakdown}, ${matches} AS m
         FROM (
           SELECT user_key${rowBreakdown}, toUInt64(toUnixTimestamp64Milli(created_at)) AS ts,
                  ${conditions.map((c, i) => `${c} AS c${i + 1}`).join(', ')}${rowStep}
           FROM events_by_user
           WHERE ${scopeCondition(scope)} AND event_name IN {stepNames:Array(String)} ${filtered}
         )
         GROUP BY user_key${split ? ', breakdown' : ''}
       )
     )
     WHERE level > 0
     GROUP BY breakdown`,
    params,
    USER_ORDER_SETTINGS,
  );
  return rows.map((row) => ({
    breakdown: row.breakdown,
    users: row.users.map(Number),
    median_ms: row.median_ms.map((m) => (m === null ? null : Number(m))),
  }));
}
