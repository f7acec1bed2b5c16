import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import type { Interval } from './measures.js';
import { MetricsError } from './metrics.errors.js';

const DAY_MS = 24 * 3600 * 1000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Timeseries answers at most this many buckets. */
export const MAX_BUCKETS = 2000;
/** The default window when no dates are given: the 30 days ending today. */
export const DEFAULT_WINDOW_DAYS = 30;
/**
 * The days a window may cover. The store's time functions (ClickHouse `DateTime`, `toDate`) cover
 * 1970 to 2106 only, and the sdk-user measures use the epoch as the bucket of the state before the
 * window; the service holds no data before 2000. A date outside is a 400, not a query the engine
 * cannot run.
 */
export const EARLIEST_DAY = '2000-01-01';
export const LATEST_DAY = '2099-12-31';
const SUPPORTED_DAYS = `a date from ${EARLIEST_DAY} to ${LATEST_DAY}`;

/** A window of whole UTC days, both ends inclusive. */
export type MetricsWindow = {
  dateFrom: string;
  dateTo: string;
  /** First instant of dateFrom. */
  start: Date;
  /** First instant after dateTo (exclusive end). */
  end: Date;
  retentionClamped: boolean;
  retentionWindowDays: number;
};

function parseDate(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(`${value}T00:00:00Z`);
  if (!DATE.test(value) || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw new MetricsError('METRICS_INVALID_DATE', `${name} must be a date as YYYY-MM-DD`);
  }
  return date;
}

const isSupportedDay = (date: Date) => date.getTime() >= Date.parse(EARLIEST_DAY) && date.getTime() <= Date.parse(LATEST_DAY);

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The window a request runs on: its dates (default: the 30 days ending today), narrowed to the
 * plan's allowance (SPEC 8.3): a longer request keeps date_to and starts at the earliest allowed
 * day, and says so with retention_clamped.
 */
export function resolveWindow(
  query: { date_from?: string | undefined; date_to?: string | undefined },
  plan: Plan,
  now = new Date(),
): MetricsWindow {
  const allowance = PLAN_LIMITS[plan].metricsWindowDays;
  const today = new Date(`${isoDate(now)}T00:00:00Z`);
  let to = parseDate('date_to', query.date_to);
  let from = parseDate('date_from', query.date_from);
  to ??= today;
  if (!from) from = new Date(to.getTime() - (DEFAULT_WINDOW_DAYS - 1) * DAY_MS);
  if (from.getTime() > to.getTime()) {
    throw new MetricsError('METRICS_INVALID_RANGE', 'date_from must not be after date_to');
  }
  const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
  const retentionClamped = days > allowance;
  if (retentionClamped) from = new Date(to.getTime() - (allowance - 1) * DAY_MS);
  // Checked on the applied window: an early date_from the plan's clamp moves into range (a
  // client's "since the beginning", e.g. 0000-01-01) still answers; only a window that would
  // reach outside the supported days is refused.
  if (!isSupportedDay(to)) throw new MetricsError('METRICS_INVALID_DATE', `date_to must be ${SUPPORTED_DAYS}`);
  if (!isSupportedDay(from)) {
    const culprit = query.date_from !== undefined ? 'date_from' : 'date_to';
    throw new MetricsError(
      'METRICS_INVALID_DATE',
      `${culprit} must be ${SUPPORTED_DAYS}, and the window within them (its first day would be ${isoDate(from)})`,
    );
  }
  return {
    dateFrom: isoDate(from),
    dateTo: isoDate(to),
    start: from,
    end: new Date(to.getTime() + DAY_MS),
    retentionClamped,
    retentionWindowDays: allowance,
  };
}

/** Start of the bucket of `interval` that holds `instant` (weeks start on Monday, UTC). */
export function bucketStart(instant: Date, interval: Interval): Date {
  const d = new Date(instant.getTime());
  switch (interval) {
    case 'hour':
      d.setUTCMinutes(0, 0, 0);
      return d;
    case 'day':
      d.setUTCHours(0, 0, 0, 0);
      return d;
    case 'week': {
      d.setUTCHours(0, 0, 0, 0);
      const sinceMonday = (d.getUTCDay() + 6) % 7;
      return new Date(d.getTime() - sinceMonday * DAY_MS);
    }
    case 'month':
      return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  }
}

export function nextBucket(start: Date, interval: Interval): Date {
  switch (interval) {
    case 'hour':
      return new Date(start.getTime() + 3600 * 1000);
    case 'day':
      return new Date(start.getTime() + DAY_MS);
    case 'week':
      return new Date(start.getTime() + 7 * DAY_MS);
    case 'month':
      return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  }
}

/** A bucket of a timeseries: its natural start, and the part of the window it covers. */
export type Bucket = { start: Date; from: Date; to: Date };

/**
 * Every bucket that overlaps the window, in order. A bucket's own range is clipped to the window,
 * so a week that began before date_from counts only the window's days.
 */
export function bucketsOf(window: MetricsWindow, interval: Interval): Bucket[] {
  const buckets: Bucket[] = [];
  for (let start = bucketStart(window.start, interval); start < window.end; start = nextBucket(start, interval)) {
    if (buckets.length >= MAX_BUCKETS) {
      throw new MetricsError('METRICS_TOO_MANY_BUCKETS', `at most ${MAX_BUCKETS} buckets: use a longer interval or a shorter window`);
    }
    const end = nextBucket(start, interval);
    buckets.push({
      start,
      // biome-ignore lint/complexity/useMathMinMax: Dates; Math.max would turn them into numbers
      from: start < window.start ? window.start : start,
      // biome-ignore lint/complexity/useMathMinMax: Dates, as above
      to: end > window.end ? window.end : end,
    });
  }
  return buckets;
}

/** Which earlier period `compare` reads (docs/metrics.md, "Compare"). */
export const COMPARE_KINDS = ['previous_period', 'previous_year'] as const;
export type CompareKind = (typeof COMPARE_KINDS)[number];

/** The same day one year earlier; 29 February becomes 28 February. */
function yearBefore(day: Date): Date {
  const year = day.getUTCFullYear() - 1;
  const month = day.getUTCMonth();
  const lastOfMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return new Date(Date.UTC(year, month, Math.min(day.getUTCDate(), lastOfMonth)));
}

/**
 * The earlier window of a compare: the same number of days right before date_from
 * (previous_period), or the same dates one year earlier (previous_year). It obeys the plan's
 * allowance as the main window does: nothing before `floor` (the first day the request may read)
 * is read; a window that starts before it starts at it, and one that ends before it reads nothing
 * (start = end), both with retentionClamped.
 */
export function compareWindow(window: MetricsWindow, kind: CompareKind, floor: Date): MetricsWindow {
  const days = Math.round((window.end.getTime() - window.start.getTime()) / DAY_MS);
  let from: Date;
  let to: Date;
  if (kind === 'previous_period') {
    from = new Date(window.start.getTime() - days * DAY_MS);
    to = new Date(window.start.getTime() - DAY_MS);
  } else {
    from = yearBefore(window.start);
    to = yearBefore(new Date(window.end.getTime() - DAY_MS));
  }
  const after = new Date(to.getTime() + DAY_MS);
  const clamped = from < floor;
  const unreadable = after <= floor;
  return {
    dateFrom: isoDate(clamped && !unreadable ? floor : from),
    dateTo: isoDate(to),
    start: clamped && !unreadable ? floor : from,
    end: unreadable ? from : after,
    retentionClamped: clamped,
    retentionWindowDays: window.retentionWindowDays,
  };
}
