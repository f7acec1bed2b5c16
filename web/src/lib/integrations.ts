import type { Schemas } from '../api/client';

export type Integration = Schemas['Integration'];
export type IntegrationKind = Integration['kind'];
export type NotificationType = NonNullable<Integration['events']>[number];

export const KIND_LABELS: Record<IntegrationKind, string> = { slack: 'Slack', discord: 'Discord', webhook: 'Signed webhook' };

/** The notification types an integration can subscribe to, in the owner's words. */
export const EVENT_LABELS: Record<NotificationType, string> = {
  'feedback.created': 'New feedback',
  'feedback.status_changed': 'Status changes (merges included)',
};
export const NOTIFICATION_TYPES = Object.keys(EVENT_LABELS) as NotificationType[];

/**
 * An integration has no name of its own: it is named by its kind and the host it posts to
 * ("Slack · hooks.slack.com"), which is what tells two of them apart.
 */
export function integrationName(integration: Pick<Integration, 'kind' | 'url'>): string {
  let host = integration.url;
  try {
    host = new URL(integration.url).host;
  } catch {
    // An unparsable URL is shown as it is.
  }
  return `${KIND_LABELS[integration.kind]} · ${host}`;
}

/** What an integration receives, in words; null means every type, also those added later. */
export function describeEvents(events: NotificationType[] | null): string {
  if (events === null) return 'Everything (also types added later)';
  return events.map((type) => EVENT_LABELS[type]).join(', ');
}

/** "1 attempt", "3 attempts". */
export const attempts = (n: number) => `${n} ${n === 1 ? 'attempt' : 'attempts'}`;
