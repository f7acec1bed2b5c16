import type { Sql, SqlLike } from './db.js';
import { findFeedback, heldFrom, lockFeedback } from './feedback.repo.js';
import { type FeedbackRow, VOTING_CLOSED_STATUSES } from './feedback.row.js';
import { feedbackVotesChanged } from './notification-payload.js';
import { recordNotification } from './notifications.repo.js';
import { recordFact } from './outbox.repo.js';
import { hasActiveLinks } from './trackers.repo.js';

/**
 * A vote added or removed on an item with linked issues tells their trackers (the votes line of
 * each issue follows: docs/integrations.md "Out"), in the vote's transaction like any notification.
 */
async function votesChanged(tx: SqlLike, projectId: string, feedbackId: string): Promise<void> {
  if (!(await hasActiveLinks(tx, feedbackId))) return;
  const feedback = (await findFeedback(tx, projectId, feedbackId, undefined)) as FeedbackRow;
  await recordNotification(tx, feedbackVotesChanged(feedback));
}

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
    // A held anonymous submission is its author's alone (heldFrom): missing to any other voter.
    if (!feedback || heldFrom(feedback, input.userId)) return { kind: 'not_found' as const };
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
    await votesChanged(tx, projectId, feedbackId);
    return {
      kind: 'voted' as const,
      vote: { feedback_id: feedbackId, vote_count: row?.vote_count ?? 0, has_voted: true },
    };
  });
}

/**
 * Removes one user's vote. Removing a vote that does not exist changes nothing and answers the
 * current count: DELETE is idempotent, and the counter cannot go below zero. Null when the item is
 * not there, or is a held anonymous submission of another user (heldFrom).
 */
export async function removeVote(sql: Sql, projectId: string, feedbackId: string, userId: string): Promise<VoteState | null> {
  return sql.begin(async (tx) => {
    const feedback = await lockFeedback(tx, projectId, feedbackId);
    if (!feedback || heldFrom(feedback, userId)) return null;
    const deleted = await tx`
      delete from votes where feedback_id = ${feedbackId} and user_id = ${userId}
      returning 1`;
    if (deleted.length === 0) return { feedback_id: feedbackId, vote_count: feedback.vote_count, has_voted: false };
    const [row] = await tx<{ vote_count: number }[]>`
      update feedbacks set vote_count = vote_count - 1, updated_at = now()
      where id = ${feedbackId}
      returning vote_count`;
    await recordFact(tx, { kind: 'vote_removed', projectId, feedbackId, userId });
    await votesChanged(tx, projectId, feedbackId);
    return { feedback_id: feedbackId, vote_count: row?.vote_count ?? 0, has_voted: false };
  });
}

export type VoterRow = { user_id: string; email: string | null; mrr: number | null; created_at: Date };
export type VotersOfFeedback = { voters: VoterRow[]; total_mrr: number | null };

/**
 * The voters of one item with their current MRR (from sdk_users; null for a user never registered
 * or registered without one), highest MRR first, then oldest vote. total_mrr is the sum the item's
 * Feedback answers (null when no voter has an MRR). Null when the item is not in the project.
 */
export async function listVoters(sql: SqlLike, projectId: string, feedbackId: string): Promise<VotersOfFeedback | null> {
  const [feedback] = await sql`select 1 from feedbacks where id = ${feedbackId} and project_id = ${projectId}`;
  if (!feedback) return null;
  const voters = await sql<VoterRow[]>`
    select v.user_id, v.email, u.mrr, v.created_at
    from votes v
    left join sdk_users u on u.project_id = ${projectId} and u.user_id = v.user_id
    where v.feedback_id = ${feedbackId}
    order by u.mrr desc nulls last, v.created_at asc, v.user_id asc`;
  // Summed by PostgreSQL as the Feedback's total_mrr is, so the two figures are the same number.
  const [total] = await sql<{ total_mrr: number | null }[]>`
    select sum(u.mrr) as total_mrr
    from votes v
    join sdk_users u on u.project_id = ${projectId} and u.user_id = v.user_id
    where v.feedback_id = ${feedbackId}`;
  return { voters, total_mrr: total?.total_mrr ?? null };
}
