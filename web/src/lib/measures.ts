import { formatCount, formatDuration, formatMoney, formatPercent } from './format';

/**
 * The measures the metrics page charts beside its default (events and unique users): active
 * users and property math (docs/metrics.md, "Measures"). The page keeps the chosen one in its URL
 * as the API names it (`measure=p90:properties.duration_ms`).
 */
export const ACTIVE_MEASURES = [
  { measure: 'dau', label: 'Daily active users (DAU)' },
  { measure: 'wau', label: 'Weekly active users (WAU)' },
  { measure: 'mau', label: 'Monthly active users (MAU)' },
  { measure: 'events_per_user', label: 'Events per user' },
] as const;

export const PROPERTY_MATH = [
  { math: 'sum', label: 'Sum' },
  { math: 'avg', label: 'Average' },
  { math: 'min', label: 'Minimum' },
  { math: 'max', label: 'Maximum' },
  { math: 'median', label: 'Median' },
  { math: 'p90', label: '90th percentile' },
  { math: 'p95', label: '95th percentile' },
  { math: 'p99', label: '99th percentile' },
] as const;
export type PropertyMath = (typeof PROPERTY_MATH)[number]['math'];

const MATH = /^(sum|avg|min|max|median|p90|p95|p99):(properties(\.[^.]+)+)$/;

/** A measure the picker offers, read from the URL; anything else is no choice (the default chart). */
export function readMeasure(text: string | undefined): string | undefined {
  if (!text) return undefined;
  if (ACTIVE_MEASURES.some((m) => m.measure === text)) return text;
  return MATH.test(text) ? text : undefined;
}

/** The math and property of a property-math measure, or null. */
export function splitMath(measure: string): { math: PropertyMath; property: string } | null {
  const match = MATH.exec(measure);
  return match ? { math: match[1] as PropertyMath, property: match[2] as string } : null;
}

/** A measure in words: "90th percentile of duration_ms", "Daily active users (DAU)". */
export function measureLabel(measure: string): string {
  const active = ACTIVE_MEASURES.find((m) => m.measure === measure);
  if (active) return active.label;
  const math = splitMath(measure);
  if (math) {
    const label = PROPERTY_MATH.find((m) => m.math === math.math)?.label ?? math.math;
    return `${label} of ${math.property.slice('properties.'.length)}`;
  }
  return MEASURE_LABELS[measure] ?? measure;
}

const MEASURE_LABELS: Record<string, string> = {
  event_count: 'Events',
  unique_event_users: 'Unique users',
  sessions: 'Sessions',
  session_duration_avg: 'Average session',
  session_duration_median: 'Median session',
  session_duration_p90: 'Session, 90th percentile',
  bounce_rate: 'Bounce rate',
  events_per_session: 'Events per session',
};

const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** A measure's value as the page writes it: durations in their unit, shares in percent, counts whole. */
export function formatMeasure(measure: string, value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (measure.startsWith('session_duration')) return formatDuration(value);
  if (measure === 'bounce_rate') return formatPercent(value);
  if (measure === 'total_mrr' || measure === 'voter_mrr') return formatMoney(value);
  if (Number.isInteger(value)) return formatCount(value);
  return decimal.format(value);
}

const signed = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 1, signDisplay: 'exceptZero' });

/** A comparison's change ((now − before) / before) in words: "+12.5%", or "no earlier value" for null. */
export function formatChange(change: number | null | undefined): string {
  if (change === null || change === undefined) return 'no earlier value';
  return signed.format(change);
}
