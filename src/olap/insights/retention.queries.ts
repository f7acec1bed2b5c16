import type { ClickHouseClient } from '../clickhouse.js';
import { filterCondition } from '../filter-sql.js';
import type { FilterList } from '../filter-types.js';
import { type InsightScope, queryRows, scopeCondition, scopeParams, USER_ORDER_SETTINGS } from './query-rows.js';

export type RetentionInterval = 'day' | 'week';

export type RetentionQuery = {
  /** The event whose first occurrence in the window puts a user in a cohort; undefined: any event. */
  cohortEvent?: string | undefined;
  /** The event that counts as a return; undefined: any event. */
  returnEvent?: string | undefined;
  interval: RetentionInterval;
  /** The last period counted (1 to 52). */
  periods: number;
  /** Only the events that pass these are read, as cohort and as return events (docs/metrics.md, "Filters"). */
  filters?: FilterList | undefined;
};

/** Users of one cohort (its first day, YYYY-MM-DD) who were active in period `period` (0: the cohort itself). */
export type RetentionRow = { cohort_start: string; period: number; users: number };

/** The calendar bucket of a time: the UTC day, or the week starting Monday (UTC). */
const BUCKET: Record<RetentionInterval, (col: string) => string> = {
  day: (col) => `toDate(${col}, 'UTC')`,
  week: (col) => `toMonday(toDate(${col}, 'UTC'))`,
};
const DAYS_PER_PERIOD: Record<RetentionInterval, number> = { day: 1, week: 7 };

/** Bits of one word of a user's return set (UInt256, ClickHouse's widest integer). */
const WORD_BITS = 256;
/** Bits of the one word of a window with few buckets (a year of weeks): a machine word. */
const NARROW_BITS = 64;

/**
 * Retention cohorts (docs/insights.md, "Retention") in one scan of the window's events, read from
 * `events_by_user` and grouped by user (a hash on the fixed-width `user_key`, USER_ORDER_SETTINGS). Buckets
 * are numbered from the window's first one (0, 1, …). Per user: the first bucket with a cohort
 * event (by its first occurrence) and the set of buckets with a return event, kept as bits of
 * UInt256 words (groupBitOr: a few OR instructions per row, where a per-user hash set of
 * buckets cost four times as much, BENCHMARKS.md). A return in the bucket `p` intervals after the
 * cohort's own counts for period p. Period 0 is every cohort member. Rows for empty (cohort,
 * period) pairs are absent.
 *
 * When the window has at most 64 buckets (a year of weeks), both sets are one UInt64 each, and the
 * cohort is the lowest bit of the set of cohort buckets (the bucket of the first cohort event is
 * the lowest bucket holding one): per row one or two ORs into machine words, where the UInt256
 * shifts, a minIf and a countIf cost a third more CPU at 10 M events (measured, 1.3–1.5 s against
 * 0.9–1.0 s). With the same event (or any event) for both, the two sets are one.
 */
export async function retention(client: ClickHouseClient, scope: InsightScope, query: RetentionQuery): Promise<RetentionRow[]> {
  if (!Number.isInteger(query.periods) || query.periods < 1 || query.periods > 52) throw new RangeError('periods: 1 to 52');
  const isCohort = query.cohortEvent === undefined ? '1' : 'event_name = {cohortEvent:String}';
  const isReturn = query.returnEvent === undefined ? '1' : 'event_name = {returnEvent:String}';
  const bucket = BUCKET[query.interval];
  const daysPerPeriod = DAYS_PER_PERIOD[query.interval];
  // Buckets the window can touch: its days over the period length, plus one for a partial week
  // at each end; as many words as that takes.
  const spanDays = Math.ceil((scope.end.getTime() - scope.start.getTime()) / 86_400_000) + 1;
  const words = Math.max(1, Math.ceil((Math.ceil(spanDays / daysPerPeriod) + 2) / WORD_BITS));
  const params: Record<string, unknown> = { ...scopeParams(scope), periods: query.periods, daysPerPeriod };
  if (query.cohortEvent !== undefined) params.cohortEvent = query.cohortEvent;
  if (query.returnEvent !== undefined) params.returnEvent = query.returnEvent;
  const filters = filterCondition(query.filters ?? [], { properties: 'raw', prefix: 'f' });
  Object.assign(params, filters.params);
  const filtered = (query.filters ?? []).length > 0 ? `AND ${filters.sql}` : '';
  // A row's bucket by integer arithmetic on its milliseconds (no calendar function per row): the
  // window's first bucket starts at midnight UTC of a day (a Monday for weeks), and every bucket
  // is a whole number of UTC days, so the bucket of a time t at or after that start is
  // (t − first) ÷ the bucket's milliseconds, the same number as counting calendar buckets.
  const firstMs = `(toInt64(toUnixTimestamp(toDateTime(${bucket("{start:DateTime64(3, 'UTC')}")}, 'UTC'))) * 1000)`;
  const wordList = Array.from({ length: words }, (_, w) => w);
  const rowsOf = `SELECT user_key, toUInt32(intDiv(toUnixTimestamp64Milli(created_at) - ${firstMs}, ${daysPerPeriod * 86_400_000})) AS b,
                ${isCohort} AS is_cohort, ${isReturn} AS is_return
         FROM events_by_user
         WHERE ${scopeCondition(scope)} AND ((${isCohort}) OR (${isReturn})) ${filtered}`;
  const narrow = Math.ceil(spanDays / daysPerPeriod) + 2 <= NARROW_BITS;
  const bits = narrow ? NARROW_BITS : WORD_BITS;
  const sameEvent = query.cohortEvent === query.returnEvent;
  // Per user: the cohort (its bucket number) and the return set as an array of words.
  const perUser = narrow
    ? `SELECT toUInt32(bitCount(bitXor(cohort_bits, cohort_bits - 1)) - 1) AS cohort, [return_bits] AS returns
       FROM (
         SELECT ${sameEvent ? 'groupBitOr(bit)' : 'groupBitOrIf(bit, is_cohort)'} AS cohort_bits,
                ${sameEvent ? 'cohort_bits' : 'groupBitOrIf(bit, is_return)'} AS return_bits
         FROM (SELECT *, bitShiftLeft(toUInt64(1), b) AS bit FROM (${rowsOf}))
         GROUP BY user_key
         HAVING cohort_bits != 0
       )`
    : `SELECT minIf(b, is_cohort) AS cohort,
              [${wordList.map((w) => `groupBitOrIf(bitShiftLeft(toUInt256(1), b % ${WORD_BITS}), is_return AND intDiv(b, ${WORD_BITS}) = ${w})`).join(', ')}] AS returns
       FROM (${rowsOf})
       GROUP BY user_key
       HAVING countIf(is_cohort) > 0`;
  const rows = await queryRows<{ cohort_start: string; retained: number[] }>(
    client,
    `SELECT toString(addDays(${bucket("{start:DateTime64(3, 'UTC')}")}, cohort * {daysPerPeriod:UInt32})) AS cohort_start,
            arrayConcat([count()], sumForEach(arrayMap(p -> toUInt64(bitAnd(bitShiftRight(returns[intDiv(cohort + p, ${bits}) + 1], (cohort + p) % ${bits}), 1) = 1),
                                                       range(1, {periods:UInt32} + 1)))) AS retained
     FROM (${perUser})
     GROUP BY cohort`,
    params,
    USER_ORDER_SETTINGS,
  );
  return rows.flatMap((row) =>
    row.retained.flatMap((users, period) => (Number(users) > 0 ? [{ cohort_start: row.cohort_start, period, users: Number(users) }] : [])),
  );
}
