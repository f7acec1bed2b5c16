import type { AlertChange, AlertCondition, AlertInterval } from './alerts.js';

/**
 * What an alert's message says, in every channel's words (docs/notifications.md "Alerts"): the
 * value, the threshold, the interval and a dashboard link. Pure: the delivery code (emails, Slack,
 * Discord, webhooks) renders these lines in its own format.
 */

/** An alert's notification as the outbox keeps it (src/oltp/alert-notifications.ts writes it). */
export type AlertMessage = {
  alert: {
    id: string;
    name: string;
    measure: string;
    event: string | null;
    filters: unknown[];
    interval: AlertInterval;
    condition: AlertCondition;
  };
  change: AlertChange | 'test';
  interval_start: string;
  interval_end: string;
  value: number | null;
  previous_value: number | null;
  change_percent: number | null;
  condition_met: boolean;
  dashboard_path: string;
};

const number = (value: number | null) => (value === null ? 'no value' : value.toLocaleString('en-US', { maximumFractionDigits: 4 }));

/** The condition in words: "is above 100", "falls by at least 50 % against the day before". */
export function conditionWords(condition: AlertCondition, interval: AlertInterval): string {
  if ('value' in condition) return `${condition.type === 'above' ? 'is above' : 'is below'} ${number(condition.value)}`;
  return `${condition.type === 'increase' ? 'rises' : 'falls'} by at least ${number(condition.percent)} % against the ${interval} before`;
}

/** The question in words: "event_count of signup (2 filters)". */
export const questionWords = (alert: AlertMessage['alert']) =>
  `${alert.measure}${alert.event ? ` of ${alert.event}` : ''}${alert.filters.length > 0 ? ` (${alert.filters.length} ${alert.filters.length === 1 ? 'filter' : 'filters'})` : ''}`;

/** "the day from 2026-11-30 00:00 UTC". */
const intervalWords = (message: AlertMessage) =>
  `the ${message.alert.interval} from ${message.interval_start.replace('T', ' ').replace(/:00Z$/, ' UTC')}`;

/** One line saying what happened. */
export function alertHeadline(message: AlertMessage): string {
  const name = `“${message.alert.name}”`;
  if (message.change === 'test') return `Test of alert ${name}: ${questionWords(message.alert)} is ${number(message.value)} so far`;
  if (message.change === 'firing')
    return `Alert ${name} is firing: ${questionWords(message.alert)} was ${number(message.value)} in ${intervalWords(message)}`;
  return `Alert ${name} resolved: ${questionWords(message.alert)} was ${number(message.value)} in ${intervalWords(message)}`;
}

/** The further lines: the value against the one before, the condition, the interval, the link. */
export function alertLines(message: AlertMessage, publicUrl: string): string[] {
  const change = message.change_percent === null ? '' : `, ${message.change_percent >= 0 ? '+' : ''}${number(message.change_percent)} %`;
  return [
    `Value: ${number(message.value)} (the ${message.alert.interval} before: ${number(message.previous_value)}${change})`,
    `Fires when the value ${conditionWords(message.alert.condition, message.alert.interval)}: ${message.condition_met ? 'it does' : 'it does not'}.`,
    `Interval: ${message.interval_start} to ${message.interval_end}${message.change === 'test' ? ' (so far; a test, the alert’s state is unchanged)' : ''}`,
    `Dashboard: ${dashboardUrl(message, publicUrl)}`,
  ];
}

export const dashboardUrl = (message: AlertMessage, publicUrl: string) => `${publicUrl}${message.dashboard_path}`;
