import type { ClickHouseClient } from '../clickhouse.js';
import { type InsightScope, propertyText, queryRows, scopeCondition, scopeParams } from './query-rows.js';

/** A property value a funnel step can require (JSON scalars; equality only). */
export type PropertyValue = string | number | boolean;

/** One step: an event name, and top-level properties the event must carry with these values. */
export type FunnelStep = { eventName: string; where?: Readonly<Record<string, PropertyValue>> | undefined };

export type FunnelQuery = {
  steps: readonly FunnelStep[];
  /** How long after a user's step 1 the later steps may happen, in milliseconds (inclusive). */
  windowMs: number;
  /** Top-level property whose values split the funnel; undefined: one funnel. */
  breakdown?: string | undefined;
};

/**
 * Per breakdown value (null when not split, or the property is missing): for each step k
 * (index k-1), the users who reached it, and the exact median of their milliseconds from step 1
 * to their first completion of step k (null when nobody reached it; 0 for step 1).
 */
export type FunnelRow = { breakdown: string | null; users: number[]; median_ms: (number | null)[] };

/** windowFunnel keeps at most 32 conditions; the API allows 10 steps. */
export const MAX_FUNNEL_STEPS = 10;

/**
 * The condition of step `i`, with its values as parameters named after the step and property
 * positions (never after request text). A string must be a JSON string equal to it, a number a
 * JSON number equal to it, a boolean a JSON boolean.
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
  return `(${parts.join(' AND ')})`;
}

/**
 * The funnel of one project (docs/insights.md, "Funnel"). ClickHouse's windowFunnel gives each
 * user's level: the longest prefix of steps done in order (times non-decreasing; one event may
 * match consecutive steps) with the last step at most `windowMs` after the first. Its matches are
 * sorted by (time, step) as windowFunnel sorts them, and arrayFold replays windowFunnel's own
 * scan (for each step: the latest start of a chain that reached it), recording when each step is
 * first reached and from which start: the time to convert, which windowFunnel does not return.
 * Both read the same matches, so a user at level k has exactly k recorded times.
 *
 * The window is a validated integer written into the query text: ClickHouse takes aggregate
 * function parameters as literals only.
 */
export async function funnel(client: ClickHouseClient, scope: InsightScope, query: FunnelQuery): Promise<FunnelRow[]> {
  const n = query.steps.length;
  if (n < 2 || n > MAX_FUNNEL_STEPS) throw new RangeError(`a funnel has 2 to ${MAX_FUNNEL_STEPS} steps`);
  if (!Number.isSafeInteger(query.windowMs) || query.windowMs < 0) throw new RangeError('windowMs must be a non-negative integer');
  const params: Record<string, unknown> = {
    ...scopeParams(scope),
    stepNames: [...new Set(query.steps.map((s) => s.eventName))],
  };
  const conditions = query.steps.map((step, i) => stepCondition(step, i, params));
  const breakdown = query.breakdown === undefined ? "CAST(NULL, 'Nullable(String)')" : propertyText('breakdownKey');
  if (query.breakdown !== undefined) params.breakdownKey = query.breakdown;
  const w = query.windowMs;
  const steps = Array.from({ length: n }, (_, i) => i + 1);
  // The fold's state: starts[k] is the latest start (ms) of a chain that reached step k, done[k]
  // the milliseconds from its start when step k was first reached; -1 is "not yet".
  const set = (arr: string, value: string) => `arrayMap((v, i) -> if(i = x.2, ${value}, v), ${arr}, arrayEnumerate(${arr}))`;
  const fold = `arrayFold((acc, x) -> (
        if(x.2 = 1, ${set('acc.1', 'x.1')},
           if(acc.1[x.2 - 1] >= 0 AND x.1 <= acc.1[x.2 - 1] + ${w}, ${set('acc.1', 'acc.1[x.2 - 1]')}, acc.1)),
        if(acc.2[x.2] >= 0, acc.2,
           if(x.2 = 1, ${set('acc.2', '0')},
              if(acc.1[x.2 - 1] >= 0 AND x.1 <= acc.1[x.2 - 1] + ${w}, ${set('acc.2', 'x.1 - acc.1[x.2 - 1]')}, acc.2)))
      ), matches, (arrayWithConstant(${n}, toInt64(-1)), arrayWithConstant(${n}, toInt64(-1)))).2`;
  const rows = await queryRows<{ breakdown: string | null; users: number[]; median_ms: (number | null)[] }>(
    client,
    `SELECT breakdown,
            [${steps.map((k) => `countIf(level >= ${k})`).join(', ')}] AS users,
            [${steps.map((k) => `if(countIf(level >= ${k}) = 0, NULL, quantileExactInclusiveIf(0.5)(done[${k}], level >= ${k}))`).join(', ')}] AS median_ms
     FROM (
       SELECT user_id, breakdown,
              windowFunnel(${w})(ts, ${conditions.map((_, i) => `c${i + 1}`).join(', ')}) AS level,
              arraySort(arrayFlatten(groupArray(
                arrayMap(k -> (toInt64(ts), k), arrayFilter(k -> [${conditions.map((_, i) => `c${i + 1}`).join(', ')}][k] = 1, range(1, ${n + 1})))
              ))) AS matches,
              ${fold} AS done
       FROM (
         SELECT user_id, ${breakdown} AS breakdown, toUInt64(toUnixTimestamp64Milli(created_at)) AS ts,
                ${conditions.map((c, i) => `toUInt8(${c}) AS c${i + 1}`).join(', ')}
         FROM events
         WHERE ${scopeCondition(scope)} AND event_name IN {stepNames:Array(String)}
       )
       GROUP BY user_id, breakdown
     )
     WHERE level > 0
     GROUP BY breakdown`,
    params,
  );
  return rows.map((row) => ({
    breakdown: row.breakdown,
    users: row.users.map(Number),
    median_ms: row.median_ms.map((m) => (m === null ? null : Number(m))),
  }));
}
