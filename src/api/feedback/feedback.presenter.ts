import { apiTime } from '../../core/time.js';
import type { CommentRow } from '../../oltp/comments.repo.js';
import type { StatusCounts } from '../../oltp/feedback.repo.js';
import { feedbackResource } from '../../oltp/feedback.row.js';
import type { VotersOfFeedback } from '../../oltp/votes.repo.js';

/** Feedback, SPEC 2.1: the same form an item takes in notifications (oltp/feedback.row.ts). */
export const presentFeedback = feedbackResource;

/** Comment, SPEC 2.5. */
export function presentComment(row: CommentRow) {
  return {
    id: row.id,
    content: row.content,
    user_id: row.user_id,
    is_admin: row.is_admin,
    created_at: apiTime(row.created_at),
  };
}

/** An item's voters with their MRR, for the owner (admin token): the voter's email is the owner's to see. */
export function presentVoters(feedbackId: string, result: VotersOfFeedback) {
  return {
    feedback_id: feedbackId,
    total_mrr: result.total_mrr === null ? null : Number(result.total_mrr),
    voters: result.voters.map((voter) => ({
      user_id: voter.user_id,
      email: voter.email,
      mrr: voter.mrr,
      created_at: apiTime(voter.created_at),
    })),
  };
}

/** Items per status under the owner's list filters. */
export function presentStatusCounts(counts: StatusCounts) {
  return { total: counts.total, by_status: counts.by_status };
}
