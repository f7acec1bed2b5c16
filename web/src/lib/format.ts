const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
const integer = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const dateOnly = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });
const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC' });
const dayMonth = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
const monthYear = new Intl.DateTimeFormat('en-GB', { month: 'short', year: 'numeric', timeZone: 'UTC' });

/** MRR is a plain number on the wire (SPEC 2.6); the dashboard shows it as money. */
export const formatMoney = (value: number | null | undefined) => (value === null || value === undefined ? '—' : money.format(value));
export const formatCount = (value: number | null | undefined) => (value === null || value === undefined ? '—' : integer.format(value));
/** Times in UTC, the zone of the metrics buckets, so a table and the chart agree. */
export const formatDateTime = (iso: string | null | undefined) => (iso ? `${dateTime.format(new Date(iso))} UTC` : '—');
export const formatDate = (iso: string) => dateOnly.format(new Date(iso));
/** A time of day, 24-hour, UTC: "19:55". */
export const formatClock = (iso: string | number) => clock.format(new Date(iso));

/*
 * One way of writing dates on every page (issue 38): "2 Nov 2026" for a day, "2 Nov 2026, 19:55
 * UTC" for a moment, 24-hour and in UTC like the metrics buckets. Chart axes write the same parts
 * shortened to what changes between ticks: "2 Nov", "19:55", "Nov 2026", with the year (or the day)
 * added on the first tick and wherever it changes. uPlot's own formats ("11/2", "7:55pm") are
 * never shown.
 */
const DAY_SECONDS = 86_400;

/** Tick labels of a time axis (uPlot's `values`), from the tick times in seconds and their step. */
export function timeAxisLabels(ticks: number[], step: number): string[] {
  return ticks.map((seconds, index) => {
    const date = new Date(seconds * 1000);
    const previous = index > 0 ? new Date((ticks[index - 1] as number) * 1000) : null;
    if (step >= 28 * DAY_SECONDS) return monthYear.format(date);
    if (step >= DAY_SECONDS) {
      const yearChanged = !previous || previous.getUTCFullYear() !== date.getUTCFullYear();
      return yearChanged ? dateOnly.format(date) : dayMonth.format(date);
    }
    const dayChanged = !previous || previous.toISOString().slice(0, 10) !== date.toISOString().slice(0, 10);
    return dayChanged ? `${dayMonth.format(date)} ${clock.format(date)}` : clock.format(date);
  });
}

export const STATUS_LABELS = {
  pending: 'Pending',
  approved: 'Approved',
  in_progress: 'In progress',
  testflight: 'TestFlight',
  completed: 'Completed',
  rejected: 'Rejected',
} as const;
export type FeedbackStatus = keyof typeof STATUS_LABELS;
export const STATUSES = Object.keys(STATUS_LABELS) as FeedbackStatus[];

export const CATEGORY_LABELS = {
  feature_request: 'Feature request',
  bug_report: 'Bug report',
  improvement: 'Improvement',
  other: 'Other',
} as const;
export type FeedbackCategory = keyof typeof CATEGORY_LABELS;
export const CATEGORIES = Object.keys(CATEGORY_LABELS) as FeedbackCategory[];

/** YYYY-MM-DD of a UTC day, `days` before today. */
export function isoDay(daysAgo = 0): string {
  const day = new Date(Date.now() - daysAgo * 86_400_000);
  return day.toISOString().slice(0, 10);
}

const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1 });
/** A share (0..1) as a percentage; null is a dash. */
export const formatPercent = (value: number | null | undefined) => (value === null || value === undefined ? '—' : percent.format(value));

/** Seconds in the largest unit that keeps them readable: 45 s, 12 min, 3.5 h, 2.1 days. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const round = (n: number) => (n >= 10 ? Math.round(n).toString() : (Math.round(n * 10) / 10).toString());
  if (seconds < 60) return `${round(seconds)} s`;
  if (seconds < 3600) return `${round(seconds / 60)} min`;
  if (seconds < 86_400) return `${round(seconds / 3600)} h`;
  return `${round(seconds / 86_400)} days`;
}

/**
 * Tick steps for an axis of whole counts (uPlot's `incrs`; its own include 0.5 and 2.5): 1 to 5,
 * then 10, 20, 25, 50, 100, … so a chart of events never labels a tick 2.5.
 */
export const COUNT_TICK_STEPS = [
  1,
  2,
  3,
  4,
  5,
  ...Array.from({ length: 9 }, (_, power) => [1, 2, 2.5, 5].map((step) => step * 10 ** (power + 1))).flat(),
];
