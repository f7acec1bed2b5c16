import type { PublicApi } from './public-api';
import type { Visitor } from './visitor';

/** The events a host page hears from the widget (the board has no host: it drops them). */
export type HostEvent = 'feedback:vote' | 'feedback:submit' | 'feedback:comment' | 'feedback:close';

/** The three predefined events of SPEC part 6 that the panel tracks as the visitor moves. */
export type TrackedEvent = 'feedback_list' | 'feedback_detail' | 'submit_feedback';

/** What the shared panel components need from the page that holds them (widget or board). */
export type PanelEnv = {
  api: PublicApi;
  visitor: Visitor;
  notify: (event: HostEvent, detail: Record<string, unknown>) => void;
  track: (event: TrackedEvent, properties?: Record<string, string>) => void;
};

/** Tracks through /events/track with the publishable key; a failed track never bothers the visitor. */
export function tracker(api: PublicApi, visitorId: () => string) {
  return (eventName: TrackedEvent, properties: Record<string, string> = {}) => {
    api.POST('/events/track', { body: { eventName, userId: visitorId(), properties } }).catch(() => undefined);
  };
}

export const CATEGORY_LABELS: Record<string, string> = {
  feature_request: 'Feature request',
  bug_report: 'Bug report',
  improvement: 'Improvement',
  other: 'Other',
};

export const STATUS_LABELS: Record<string, string> = {
  pending: 'Open',
  approved: 'Planned',
  in_progress: 'In progress',
  testflight: 'In beta',
  completed: 'Done',
  rejected: 'Closed',
};
