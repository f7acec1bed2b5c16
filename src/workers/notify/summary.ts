import type { FeedbackPayload, NotificationType } from '../../oltp/notification-payload.js';

/** Human words for statuses and categories, shared by emails and chat messages. */
export const STATUS_LABELS: Record<string, string> = {
  pending: 'Pending',
  approved: 'Approved',
  in_progress: 'In progress',
  testflight: 'In beta (TestFlight)',
  completed: 'Completed',
  rejected: 'Rejected',
};

export const CATEGORY_LABELS: Record<string, string> = {
  feature_request: 'Feature request',
  bug_report: 'Bug report',
  improvement: 'Improvement',
  other: 'Other',
};

const label = (table: Record<string, string>, key: string | undefined) => (key ? (table[key] ?? key) : '');

/** One line saying what happened, in plain text (callers escape it for their format). */
export function headline(type: NotificationType, payload: FeedbackPayload): string {
  const f = payload.feedback;
  if (type === 'integration.test') return 'Test message: this integration works';
  if (type === 'feedback.created') return `New ${label(CATEGORY_LABELS, f.category).toLowerCase()}: ${f.title}`;
  if (payload.merged_into_id) return `“${f.title}” was merged into “${payload.merged_into_title ?? payload.merged_into_id}”`;
  return `“${f.title}” is now ${label(STATUS_LABELS, f.status)} (was ${label(STATUS_LABELS, payload.previous_status)})`;
}

/** Further lines: the description of a new item, the reason of a rejection. */
export function details(type: NotificationType, payload: FeedbackPayload): string[] {
  const f = payload.feedback;
  if (type === 'integration.test') return ['Sent with “Send test” from the dashboard. No feedback item was created.'];
  if (type === 'feedback.created') return [f.description, `Submitted by ${f.user_id}`];
  if (f.status === 'rejected' && f.rejection_reason && !payload.merged_into_id) return [`Reason: ${f.rejection_reason}`];
  return [];
}

/** Cuts text to `max` characters, marking the cut. */
export const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
