const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2 });
const integer = new Intl.NumberFormat('en-US');
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const dateOnly = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });

/** MRR is a plain number on the wire (SPEC 2.6); the dashboard shows it as money. */
export const formatMoney = (value: number | null | undefined) => (value === null || value === undefined ? '—' : money.format(value));
export const formatCount = (value: number | null | undefined) => (value === null || value === undefined ? '—' : integer.format(value));
/** Times in UTC, the zone of the metrics buckets, so a table and the chart agree. */
export const formatDateTime = (iso: string | null | undefined) => (iso ? `${dateTime.format(new Date(iso))} UTC` : '—');
export const formatDate = (iso: string) => dateOnly.format(new Date(iso));

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
