import type { Schemas } from '../api/client';
import type { Series } from '../components/time-chart';
import { measureLabel } from './measures';

/* What the Alerts page and its form share: the alert's types, labels and chart lines. */

export type Alert = Schemas['Alert'];
export type Condition = Schemas['AlertCondition'];
export type Interval = Alert['interval'];

export const ALERTS_PLAN = 'Alerts are part of the Pro and Team plans.';
export const INTERVAL_LABELS: Record<Interval, string> = { hour: 'Every hour', day: 'Every day', week: 'Every week' };
export const INTERVAL_UNITS: Record<Interval, string> = { hour: 'hours', day: 'days', week: 'weeks' };

/** A condition in words: "is above 100", "falls by at least 50 %". */
export function describeCondition(condition: Condition): string {
  if ('value' in condition) return `${condition.type === 'above' ? 'is above' : 'is below'} ${condition.value}`;
  return `${condition.type === 'increase' ? 'rises' : 'falls'} by at least ${condition.percent} %`;
}

/**
 * The line a chart draws for the condition: the threshold itself, or for a change the value it
 * takes from the point before (before × (1 ± percent)).
 */
export function thresholdLine(condition: Condition, values: (number | null)[]): (number | null)[] {
  if ('value' in condition) return values.map(() => condition.value);
  const factor = condition.type === 'increase' ? 1 + condition.percent / 100 : 1 - condition.percent / 100;
  return values.map((_, i) => {
    const before = i > 0 ? values[i - 1] : null;
    return before === null || before === undefined || before === 0 ? null : before * factor;
  });
}

/** A chart's two lines for an alert: the measure's values, and dashed, the condition's threshold. */
export function alertSeries(measure: string, condition: Condition, values: (number | null)[]): Series[] {
  return [
    { label: measureLabel(measure), values, color: '#2457c5' },
    { label: 'Threshold', values: thresholdLine(condition, values), color: '#b3261e', dash: [6, 4] },
  ];
}
