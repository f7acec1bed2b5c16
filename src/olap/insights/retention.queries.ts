import type { ClickHouseClient } from '../clickhouse.js';
import { type InsightScope, queryRows, scopeCondition, scopeParams } from './query-rows.js';

export type RetentionInterval = 'day' | 'week';

export type RetentionQuery = {
  /** The event whose first occurrence in the window puts a user in a cohort; undefined: any event. */
  cohortEvent?: string | undefined;
  /** The event that counts as a return; undefined: any event. */
  returnEvent?: string | undefined;
  interval: RetentionInterval;
  /** The last period counted (1 to 52). */
  periods: number;
};

/** Users of one cohort (its first day, YYYY-MM-DD) who were active in period `period` (0: the cohort itself). */
export type RetentionRow = { cohort_start: string; period: number; users: number };

/** The calendar bucket of a time: the UTC day, or the week starting Monday (UTC). */
const BUCKET: Record<RetentionInterval, (col: string) => string> = {
  day: (col) => `toDate(${col}, 'UTC')`,
  week: (col) => `toMonday(toDate(${col}, 'UTC'))`,
};
const DAYS_PER_PERIOD: Record<RetentionInterval, number> = { day: 1, week: 7 };

/**
 * Retention cohorts (docs/insights.md, "Retention") in one scan of the window's events: per user,
 * the first occurrence of the cohort event and the set of buckets with a return event; a return in
 * the bucket `p` intervals after the cohort's own counts for period p. Period 0 is every cohort
 * member. Rows for empty (cohort, period) pairs are absent.
 */
export async function retention(client: ClickHouseClient, scope: InsightScope, query: RetentionQuery): Promise<RetentionRow[]> {
  if (!Number.isInteger(query.periods) || query.periods < 1 || query.periods > 52) throw new RangeError('periods: 1 to 52');
  const isCohort = query.cohortEvent === undefined ? '1' : 'event_name = {cohortEvent:String}';
  const isReturn = query.returnEvent === undefined ? '1' : 'event_name = {returnEvent:String}';
  const bucket = BUCKET[query.interval];
  const params: Record<string, unknown> = { ...scopeParams(scope), periods: query.periods, daysPerPeriod: DAYS_PER_PERIOD[query.interval] };
  if (query.cohortEvent !== undefined) params.cohortEvent = query.cohortEvent;
  if (query.returnEvent !== undefined) params.returnEvent = query.returnEvent;
  const rows = await queryRows<RetentionRow>(
    client,
    `SELECT toString(cohort) AS cohort_start, period, count() AS users
     FROM (
       SELECT ${bucket('first_at')} AS cohort,
              arrayConcat([0], arrayFilter(p -> p >= 1 AND p <= {periods:UInt32},
                arrayMap(b -> intDiv(dateDiff('day', cohort, b), {daysPerPeriod:UInt32}), return_buckets))) AS periods
       FROM (
         SELECT user_id,
                minIf(created_at, ${isCohort}) AS first_at,
                groupUniqArrayIf(${bucket('created_at')}, ${isReturn}) AS return_buckets
         FROM events
         WHERE ${scopeCondition(scope)} AND ((${isCohort}) OR (${isReturn}))
         GROUP BY user_id
         HAVING countIf(${isCohort}) > 0
       )
     )
     ARRAY JOIN periods AS period
     GROUP BY cohort_start, period`,
    params,
  );
  return rows.map((row) => ({ cohort_start: row.cohort_start, period: Number(row.period), users: Number(row.users) }));
}
