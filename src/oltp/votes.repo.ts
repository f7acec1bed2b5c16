import type { Sql } from './db.js';
import { recordFact } from './outbox.repo.js';
import { lockFeedback } from './feedback.repo.js';
import { VOTING_CLOSED_STATUSES } from './feedback.row.js';

export type VoteState = { feedback_id: string; vote_count: number; has_voted: boolean };

export type AddVoteResult =
  | { kind: 'voted'; vote: VoteState }
  | { kind: 'not_found' }
  | { kind: 'voting_closed'; status: string }
  | { kind: 'merged'; mergedIntoId: string }
  | { kind: 'already_voted' };

/**
 * Adds one user's vote. The feedback row is locked for the transaction and the (feedback, user)
 * primary key refuses a second vote, so concurrent requests by one user yield exactly one vote
 * and the counter moves with the row it counts.
 */
export async function addVote(
  sql: Sql,
  projectId: string,
  feedbackId: string,
  input: { userId: string; email?: string | undefined; notifyStatusChange: boolean },
): Promise<AddVoteResult> {
  return sql.begin(async (tx) => {
    const feedback = await lockFeedback(tx, projectId, feedbackId);
    if (!feedback) return { kind: 'not_found' as const };
    if (VOTING_CLOSED_STATUSES.has(feedback.status)) return { kind: 'voting_closed' as const, status: feedback.status };
    if (feedback.merged_into_id) return { kind: 'merged' as const, mergedIntoId: feedback.merged_into_id };
    const inserted = await tx`
      insert into votes (feedback_id, user_id, email, notify_status_change)
      values (${feedbackId}, ${input.userId}, ${input.email ?? null}, ${input.notifyStatusChange})
      on conflict (feedback_id, user_id) do nothing
      returning 1`;
    if (inserted.length === 0) return { kind: 'already_voted' as const };
    const [row] = await tx<{ vote_count: number }[]>`
      update feedbacks set vote_count = vote_count + 1, updated_at = now()
      where id = ${feedbackId}
      returning vote_count`;
    await recordFact(tx, { kind: 'vote_added', projectId, feedbackId, userId: input.userId });
    return {
      kind: 'voted' as const,
      vote: { feedback_id: feedbackId, vote_count: row?.vote_count ?? 0, has_voted: true },
    };
  });
}

/**
 * Removes one user's vote. Removing a vote that does not exist changes nothing and answers the
 * current count: DELETE is idempotent, and the counter cannot go below zero.
 */
export async function removeVote(sql: Sql, projectId: string, feedbackId: string, userId: string): Promise<VoteState | null> {
  return sql.begin(async (tx) => {
    const feedback = await lockFeedback(tx, projectId, feedbackId);
    if (!feedback) return null;
    const deleted = await tx`
      delete from votes where feedback_id = ${feedbackId} and user_id = ${userId}
      returning 1`;
    if (deleted.length === 0) return { feedback_id: feedbackId, vote_count: feedback.vote_count, has_voted: false };
    const [row] = await tx<{ vote_count: number }[]>`
      update feedbacks set vote_count = vote_count - 1, updated_at = now()
      where id = ${feedbackId}
      returning vote_count`;
    await recordFact(tx, { kind: 'vote_removed', projectId, feedbackId, userId });
    return { feedback_id: feedbackId, vote_count: row?.vote_count ?? 0, has_voted: false };
  });
}
