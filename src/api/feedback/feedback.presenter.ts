import type { CommentRow } from '../../oltp/comments.repo.js';
import { feedbackResource } from '../../oltp/feedback.row.js';

/** Feedback, SPEC 2.1: the same form an item takes in notifications (oltp/feedback.row.ts). */
export const presentFeedback = feedbackResource;

/** Comment, SPEC 2.5. */
export function presentComment(row: CommentRow) {
  return {
    id: row.id,
    content: row.content,
    user_id: row.user_id,
    is_admin: row.is_admin,
    created_at: row.created_at.toISOString(),
  };
}
