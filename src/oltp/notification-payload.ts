import type { AlertMessage } from '../core/alert-message.js';
import type { DigestContent } from '../core/digest.js';
import { type FeedbackRow, type FeedbackStatus, feedbackResource } from './feedback.row.js';

/**
 * `integration.test` is an owner's "send test" of one integration: its payload's feedback is a
 * sample (testMessagePayload), never a stored item, and it reaches only that integration.
 * `changelog.published` announces a changelog entry (ChangelogPayload below). `alert.firing` and
 * `alert.resolved` tell an alert's change of state, `alert.test` its "Send test" (AlertPayload);
 * `digest.weekly` is a project's weekly digest (DigestPayload). `feedback.votes_changed` is a vote
 * added to or removed from an item with linked issues: it reaches the issue trackers only, whose
 * issues' votes line follows (docs/integrations.md "Out").
 */
export const NOTIFICATION_TYPES = [
  'feedback.created',
  'feedback.status_changed',
  'integration.test',
  'changelog.published',
  'alert.firing',
  'alert.resolved',
  'alert.test',
  'digest.weekly',
  'feedback.votes_changed',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];
export const ALERT_NOTIFICATION_TYPES = ['alert.firing', 'alert.resolved', 'alert.test'] as const;
export type AlertNotificationType = (typeof ALERT_NOTIFICATION_TYPES)[number];
/** The types whose payload is about one feedback item (FeedbackPayload). */
export type FeedbackNotificationType = Exclude<NotificationType, 'changelog.published' | AlertNotificationType | 'digest.weekly'>;

/** Feedback as the API answers it (SPEC 2.1), frozen at the moment of the change. */
export type NotifiedFeedback = ReturnType<typeof feedbackResource>;

/**
 * What a `notifications` row of a feedback type holds. The feedback is a snapshot taken in the
 * transaction of the change, so every recipient, and every retry, sees the item as it was then.
 */
export type FeedbackPayload = {
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
  /**
   * Internal, never sent: the changelog entry whose email carries this status change (published
   * with `complete_linked`). Integrations are told as usual; nobody is emailed for it, since the
   * entry's email already tells the same people (docs/notifications.md "The folding rule").
   */
  folded_into_entry?: string;
};

/** A changelog entry as its notification carries it: what it said when it was published. */
export type NotifiedEntry = {
  id: string;
  title: string;
  /** The sanitized HTML every reader gets (src/core/changelog-html.ts). */
  html: string;
  category: string | null;
  published_at: string;
};

/**
 * What a `changelog.published` row holds: the entry and its linked items, snapshots taken in the
 * publish transaction (after `complete_linked` moved them), in the entry's order.
 */
export type ChangelogPayload = {
  entry: NotifiedEntry;
  items: NotifiedFeedback[];
  /** The items this publish moved to `completed` (complete_linked); empty otherwise. */
  completed_feedback_ids: string[];
};

/** What an alert's notification holds: the message as the check (or the test) made it. */
export type AlertPayload = { alert_message: AlertMessage };

/** What a `digest.weekly` row holds: the week's digest as computed for the run (digest_runs.content). */
export type DigestPayload = { digest: DigestContent };

export type NotificationPayload = FeedbackPayload | ChangelogPayload | AlertPayload | DigestPayload;

/** Narrows a payload by its shape: only a changelog payload has an entry. */
export const isChangelogPayload = (payload: NotificationPayload): payload is ChangelogPayload => 'entry' in payload;
export const isAlertPayload = (payload: NotificationPayload): payload is AlertPayload => 'alert_message' in payload;
export const isDigestPayload = (payload: NotificationPayload): payload is DigestPayload => 'digest' in payload;
/** A payload about one feedback item: none of the others. */
export const isFeedbackPayload = (payload: NotificationPayload): payload is FeedbackPayload => 'feedback' in payload;

export type Notification =
  | { projectId: string; type: FeedbackNotificationType; payload: FeedbackPayload }
  | { projectId: string; type: 'changelog.published'; payload: ChangelogPayload; changelogEntryId: string }
  | { projectId: string; type: AlertNotificationType; payload: AlertPayload }
  | { projectId: string; type: 'digest.weekly'; payload: DigestPayload };

/** The snapshot of an item; `has_voted` belongs to a request's viewer, not to a notification. */
const snapshot = (row: FeedbackRow): NotifiedFeedback => ({ ...feedbackResource(row), has_voted: false });

export const feedbackCreated = (row: FeedbackRow): Notification => ({
  projectId: row.project_id,
  type: 'feedback.created',
  payload: { feedback: snapshot(row) },
});

export const feedbackStatusChanged = (row: FeedbackRow, previousStatus: FeedbackStatus, foldedIntoEntry?: string): Notification => ({
  projectId: row.project_id,
  type: 'feedback.status_changed',
  payload: {
    feedback: snapshot(row),
    previous_status: previousStatus,
    audience: { votes_of: row.id },
    ...(foldedIntoEntry ? { folded_into_entry: foldedIntoEntry } : {}),
  },
});

/** A vote added or removed on an item with linked issues (its trackers' votes line follows). */
export const feedbackVotesChanged = (row: FeedbackRow): Notification => ({
  projectId: row.project_id,
  type: 'feedback.votes_changed',
  payload: { feedback: snapshot(row) },
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

export const changelogPublished = (
  projectId: string,
  entry: NotifiedEntry,
  items: FeedbackRow[],
  completedFeedbackIds: string[],
): Notification => ({
  projectId,
  type: 'changelog.published',
  changelogEntryId: entry.id,
  payload: { entry, items: items.map(snapshot), completed_feedback_ids: completedFeedbackIds },
});
