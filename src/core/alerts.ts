/**
 * The vocabulary and rules of alerts on metrics (docs/notifications.md "Alerts"), shared by the
 * routes, the evaluator and the dashboard's preview: the intervals an alert is checked on, what its
 * condition means for a value, and how a check moves its state. Pure: no store, no clock of its own.
 */

export const ALERT_INTERVALS = ['hour', 'day', 'week'] as const;
export type AlertInterval = (typeof ALERT_INTERVALS)[number];

export const ALERT_CONDITION_TYPES = ['above', 'below', 'increase', 'decrease'] as const;
export type AlertConditionType = (typeof ALERT_CONDITION_TYPES)[number];

/** `above`/`below` a threshold, or an `increase`/`decrease` of at least `percent` % against the interval before. */
export type AlertCondition = { type: 'above' | 'below'; value: number } | { type: 'increase' | 'decrease'; percent: number };

export const ALERT_STATES = ['unknown', 'ok', 'firing'] as const;
export type AlertState = (typeof ALERT_STATES)[number];

/** What a change of state tells the alert's channels. */
export type AlertChange = 'firing' | 'resolved';

const HOUR_MS = 3600 * 1000;
const DAY_MS = 24 * HOUR_MS;
export const INTERVAL_MS: Record<AlertInterval, number> = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS };

/** A half-open span of time [start, end). */
export type Span = { start: Date; end: Date };

/** The interval (UTC; weeks start on Monday) that holds `instant`. */
export function intervalOf(instant: Date, interval: AlertInterval): Span {
  const d = new Date(instant.getTime());
  if (interval === 'hour') d.setUTCMinutes(0, 0, 0);
  else d.setUTCHours(0, 0, 0, 0);
  const start = interval === 'week' ? new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY_MS) : d;
  return { start, end: new Date(start.getTime() + INTERVAL_MS[interval]) };
}

/** The interval `n` intervals before `span` (n = 1: the one right before). */
export function intervalBefore(span: Span, interval: AlertInterval, n = 1): Span {
  const shift = n * INTERVAL_MS[interval];
  return { start: new Date(span.start.getTime() - shift), end: new Date(span.end.getTime() - shift) };
}

/** The latest interval that had ended at `now`. */
export const lastCompletedInterval = (now: Date, interval: AlertInterval): Span => intervalBefore(intervalOf(now, interval), interval);

/** What a condition says of one interval's value, given the interval before. */
export type Judgement = {
  holds: boolean;
  /** increase/decrease: (value − previous) / previous in percent; null when there is no percentage (previous 0 or no value). */
  changePercent: number | null;
};

/**
 * Whether the condition holds for `value` (the interval's) given `previous` (the interval before's).
 * - `above` holds when value > threshold, `below` when value < threshold: a value equal to the
 *   threshold meets neither.
 * - `increase` holds when the value rose by at least `percent` % (met exactly: holds), `decrease`
 *   when it fell by at least `percent` %. Compared as (value − previous) × 100 ≥ percent × previous,
 *   so whole numbers meet their boundary exactly, with no rounding of a division.
 * - Before a 0, a percentage does not exist: `increase` then holds when the value is above 0 (a
 *   rise from nothing is more than any percentage), `decrease` never holds (nothing falls from 0).
 * - No value (null: a ratio without users, a property's math over no value) meets no condition;
 *   a previous interval without a value counts as 0.
 */
export function judge(condition: AlertCondition, value: number | null, previous: number | null): Judgement {
  if (!('percent' in condition)) {
    if (value === null) return { holds: false, changePercent: null };
    return { holds: condition.type === 'above' ? value > condition.value : value < condition.value, changePercent: null };
  }
  const before = previous ?? 0;
  if (value === null) return { holds: false, changePercent: null };
  if (before === 0) return { holds: condition.type === 'increase' && value > 0, changePercent: null };
  const changePercent = ((value - before) / Math.abs(before)) * 100;
  const rise = (value - before) * 100;
  const needed = condition.percent * Math.abs(before);
  const holds = condition.type === 'increase' ? rise >= needed : -rise >= needed;
  return { holds, changePercent };
}

/** The state after a check, and the change it makes known: firing when it starts to hold, resolved when it stops. */
export function nextState(current: AlertState, holds: boolean): { state: 'ok' | 'firing'; change: AlertChange | null } {
  if (holds) return { state: 'firing', change: current === 'firing' ? null : 'firing' };
  return { state: 'ok', change: current === 'firing' ? 'resolved' : null };
}
