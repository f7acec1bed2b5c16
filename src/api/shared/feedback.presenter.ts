import { apiTime } from '../../core/time.js';
import type { CommentRow } from '../../oltp/comments.repo.js';
import type { StatusCounts } from '../../oltp/feedback.repo.js';
import { feedbackResource } from '../../oltp/feedback.row.js';
import type { VotersOfFeedback, VoteState } from '../../oltp/votes.repo.js';

/** Feedback, SPEC 2.1: the same form an item takes in notifications (oltp/feedback.row.ts). */
export const presentFeedback = feedbackResource;

/**
 * Comment, SPEC 2.5, with `feedback_id` beside its fields: the origin's Kotlin SDK requires it
 * (docs/clients.md). Additive.
 */
export function presentComment(row: CommentRow) {
  return {
    id: row.id,
    feedback_id: row.feedback_id,
    content: row.content,
    user_id: row.user_id,
    is_admin: row.is_admin,
    created_at: apiTime(row.created_at),
  };
}

/**
 * Vote response, SPEC 2.4, with `success: true` beside its fields: the origin's Kotlin SDK
 * requires it (docs/clients.md). Additive.
 */
export function presentVote(vote: VoteState) {
  return { feedback_id: vote.feedback_id, vote_count: vote.vote_count, has_voted: vote.has_voted, success: true as const };
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
