import { type FeedbackRow, type FeedbackStatus, feedbackResource } from './feedback.row.js';

/**
 * `integration.test` is an owner's "send test" of one integration: its payload's feedback is a
 * sample (testMessagePayload), never a stored item, and it reaches only that integration.
 */
export const NOTIFICATION_TYPES = ['feedback.created', 'feedback.status_changed', 'integration.test'] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Feedback as the API answers it (SPEC 2.1), frozen at the moment of the change. */
export type NotifiedFeedback = ReturnType<typeof feedbackResource>;

/**
 * What a `notifications` row holds. The feedback is a snapshot taken in the transaction of the
 * change, so every recipient, and every retry, sees the item as it was then.
 */
export type NotificationPayload = {
  feedback: NotifiedFeedback;
  /** feedback.status_changed: the status before the change (for a merge: the item's status). */
  previous_status?: FeedbackStatus;
  /** A merge: the item it was merged into, and that item's title (for emails). */
  merged_into_id?: string;
  merged_into_title?: string;
  /**
   * Internal, never sent: whose opted-in votes get status-change emails. A merge moves the
   * source's votes to the target, so they are looked up there, among the source's voters.
   */
  audience?: { votes_of: string; user_ids?: string[] };
};

export type Notification = { projectId: string; type: NotificationType; payload: NotificationPayload };

/** The snapshot of an item; `has_voted` belongs to a request's viewer, not to a notification. */
const snapshot = (row: FeedbackRow): NotifiedFeedback => ({ ...feedbackResource(row), has_voted: false });

export const feedbackCreated = (row: FeedbackRow): Notification => ({
  projectId: row.project_id,
  type: 'feedback.created',
  payload: { feedback: snapshot(row) },
});

export const feedbackStatusChanged = (row: FeedbackRow, previousStatus: FeedbackStatus): Notification => ({
  projectId: row.project_id,
  type: 'feedback.status_changed',
  payload: { feedback: snapshot(row), previous_status: previousStatus, audience: { votes_of: row.id } },
});

export const feedbackMerged = (source: FeedbackRow, target: FeedbackRow, sourceVoters: string[]): Notification => ({
  projectId: source.project_id,
  type: 'feedback.status_changed',
  payload: {
    feedback: snapshot(source),
    previous_status: source.status,
    merged_into_id: target.id,
    merged_into_title: target.title,
    audience: { votes_of: target.id, user_ids: sourceVoters },
  },
});
