/**
 * Which intervals a metrics window can be drawn in. The timeseries API answers at most
 * MAX_BUCKETS buckets and refuses more (METRICS_TOO_MANY_BUCKETS, docs/metrics.md): the page
 * offers only the intervals it will answer, instead of a choice that ends in a refusal.
 */
export const MAX_BUCKETS = 2000;
export type ChartInterval = 'hour' | 'day' | 'week' | 'month';
export const CHART_INTERVALS: readonly ChartInterval[] = ['hour', 'day', 'week', 'month'];
const DAY_MS = 86_400_000;
const BUCKET_MS: Record<Exclude<ChartInterval, 'month'>, number> = { hour: 3_600_000, day: DAY_MS, week: 7 * DAY_MS };

/** When the bucket that starts at `startMs` ends (weeks start on Monday and months on the 1st, UTC). */
export function bucketEndMs(startMs: number, interval: ChartInterval): number {
  if (interval !== 'month') return startMs + BUCKET_MS[interval];
  const start = new Date(startMs);
  return Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1);
}

/** The longest window, in days, that can be drawn by the hour: 83 days are 1,992 hourly buckets. */
export const MAX_HOURLY_DAYS = Math.floor(MAX_BUCKETS / 24);

/** Days from `from` to `to`, both YYYY-MM-DD and included. */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

/**
 * Whether the API answers this window by the hour. The plan's window clamps a longer request
 * first (SPEC 8.3), so a Free project's 365 days are 30 days, which hours can draw.
 */
export function hourlyAllowed(from: string, to: string, planWindowDays?: number): boolean {
  const days = Math.min(daysBetween(from, to), planWindowDays ?? Number.POSITIVE_INFINITY);
  return days <= MAX_HOURLY_DAYS;
}

/**
 * The bucket still filling up: the one that holds `now`. Its count is what arrived so far, not a
 * drop, so the chart marks it instead of drawing a cliff to 0. Null when every bucket is over.
 */
export function partialBucketIndex(startsInSeconds: number[], interval: ChartInterval, now = Date.now()): number | null {
  const last = startsInSeconds.length - 1;
  const start = startsInSeconds[last];
  if (start === undefined) return null;
  return start * 1000 <= now && now < bucketEndMs(start * 1000, interval) ? last : null;
}
