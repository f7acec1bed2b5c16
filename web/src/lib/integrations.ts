import type { Schemas } from '../api/client';

/** An integration that posts notification messages: Slack, Discord, a signed webhook. */
export type Integration = Schemas['Integration'];
export type IntegrationKind = Integration['kind'];
export type NotificationType = NonNullable<Integration['events']>[number];
/** An issue tracker's integration: GitHub or Linear (components/trackers.tsx). */
export type TrackerIntegration = Schemas['TrackerIntegration'];
export type TrackerKind = TrackerIntegration['kind'];
/** What the integration list answers: both. */
export type AnyIntegration = Integration | TrackerIntegration;

export const isTracker = (integration: AnyIntegration): integration is TrackerIntegration =>
  integration.kind === 'github' || integration.kind === 'linear';

export const KIND_LABELS: Record<IntegrationKind, string> = { slack: 'Slack', discord: 'Discord', webhook: 'Signed webhook' };
export const TRACKER_LABELS: Record<TrackerKind, string> = { github: 'GitHub', linear: 'Linear' };

/** The notification types an integration can subscribe to, in the owner's words. */
export const EVENT_LABELS: Record<NotificationType, string> = {
  'feedback.created': 'New feedback',
  'feedback.status_changed': 'Status changes (merges included)',
  'changelog.published': 'Changelog entries published',
};
export const NOTIFICATION_TYPES = Object.keys(EVENT_LABELS) as NotificationType[];

/**
 * An integration has no name of its own: it is named by its kind and the host it posts to
 * ("Slack · hooks.slack.com"), which is what tells two of them apart.
 */
export function integrationName(integration: AnyIntegration): string {
  if (isTracker(integration)) {
    return `${TRACKER_LABELS[integration.kind]} · ${integration.repository ?? `team ${integration.team_id?.slice(0, 8) ?? ''}`}`;
  }
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
