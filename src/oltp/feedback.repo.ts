import type postgres from 'postgres';
import type { Sql, SqlLike } from './db.js';
import {
  FEEDBACK_STATUSES,
  type FeedbackCategory,
  type FeedbackRow,
  type FeedbackSort,
  type FeedbackStatus,
  type OwnerFeedbackSort,
} from './feedback.row.js';
import { carryComments } from './merge-comments.js';
import { feedbackCreated, feedbackMerged, feedbackStatusChanged } from './notification-payload.js';
import { recordNotification } from './notifications.repo.js';
import { recordFact } from './outbox.repo.js';

/**
 * The columns of a Feedback response. `viewer` is the X-User-Id of the request: has_voted is
 * true only for a user holding a vote. total_mrr sums the current MRR of the item's voters and is
 * null when none of them has one (SUM over no non-null value).
 */
function feedbackColumns(sql: SqlLike, viewer: string | undefined) {
  return sql`
    f.id, f.project_id, f.title, f.description, f.status, f.category, f.user_id, f.user_email,
    f.vote_count, f.comment_count, f.created_at, f.updated_at, f.rejection_reason,
    f.merged_into_id, f.merged_at, f.awaiting_approval,
    ${
      viewer === undefined ? sql`false` : sql`exists (select 1 from votes v where v.feedback_id = f.id and v.user_id = ${viewer})`
    } as has_voted,
    (
      select sum(u.mrr)
      from votes v
      join sdk_users u on u.project_id = f.project_id and u.user_id = v.user_id
      where v.feedback_id = f.id
    ) as total_mrr,
    (
      select array_agg(m.id order by m.merged_at, m.id)
      from feedbacks m
      where m.merged_into_id = f.id
    ) as merged_feedback_ids`;
}

export type FeedbackFilters = {
  status?: FeedbackStatus | undefined;
  category?: FeedbackCategory | undefined;
  includeMerged: boolean;
  /**
   * `awaiting`: only anonymous submissions waiting for an owner's approval (the moderation queue);
   * otherwise every list leaves them out (docs/widget.md, "Moderation").
   */
  approval?: 'published' | 'awaiting' | undefined;
  /** Title contains this text, case-insensitively (the owner's list only). */
  q?: string | undefined;
  sort: FeedbackSort | OwnerFeedbackSort;
  limit?: number | undefined;
  offset?: number | undefined;
};

/** Each sort ends with the id, so equal keys still come back in one stable order. */
function orderBy(sql: SqlLike, sort: FeedbackSort | OwnerFeedbackSort) {
  switch (sort) {
    case 'mrr':
      // total_mrr is the output column of feedbackColumns; items no voter brings MRR to come last.
      return sql`total_mrr desc nulls last, f.vote_count desc, f.created_at desc, f.id desc`;
    case 'votes':
      return sql`f.vote_count desc, f.created_at desc, f.id desc`;
    case 'newest':
      return sql`f.created_at desc, f.id desc`;
    case 'oldest':
      return sql`f.created_at asc, f.id asc`;
    case 'comments':
      return sql`f.comment_count desc, f.created_at desc, f.id desc`;
  }
}

/**
 * `ilike` with the term's own wildcards escaped: a search for `50%` or `a_b` finds those
 * characters, not any text. The term travels as a parameter, never as SQL.
 */
function titleContains(sql: SqlLike, q: string | undefined) {
  if (q === undefined || q === '') return sql``;
  const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`and f.title ilike ${pattern} escape '\\'`;
}

export async function listFeedbacks(
  sql: SqlLike,
  projectId: string,
  filters: FeedbackFilters,
  viewer: string | undefined,
): Promise<FeedbackRow[]> {
  return sql<FeedbackRow[]>`
    select ${feedbackColumns(sql, viewer)}
    from feedbacks f
    where f.project_id = ${projectId}
      ${filters.status ? sql`and f.status = ${filters.status}` : sql``}
      ${filters.category ? sql`and f.category = ${filters.category}` : sql``}
      ${filters.includeMerged ? sql`` : sql`and f.merged_into_id is null`}
      ${filters.approval === 'awaiting' ? sql`and f.awaiting_approval` : sql`and not f.awaiting_approval`}
      ${titleContains(sql, filters.q)}
    order by ${orderBy(sql, filters.sort)}
    ${filters.limit !== undefined ? sql`limit ${filters.limit}` : sql``}
    ${filters.offset !== undefined ? sql`offset ${filters.offset}` : sql``}`;
}

export type StatusCounts = { total: number; by_status: Record<FeedbackStatus, number> };

/**
 * How many items of the project are in each status, under the list's filters other than status
 * (category, merged items, title search), so the counts match the list they sit beside.
 */
export async function countFeedbacksByStatus(
  sql: SqlLike,
  projectId: string,
  filters: Pick<FeedbackFilters, 'category' | 'includeMerged' | 'q'>,
): Promise<StatusCounts> {
  const rows = await sql<{ status: FeedbackStatus; count: number }[]>`
    select f.status, count(*)::int as count
    from feedbacks f
    where f.project_id = ${projectId}
      ${filters.category ? sql`and f.category = ${filters.category}` : sql``}
      ${filters.includeMerged ? sql`` : sql`and f.merged_into_id is null`}
      ${titleContains(sql, filters.q)}
    group by f.status`;
  const byStatus = Object.fromEntries(FEEDBACK_STATUSES.map((status) => [status, 0])) as Record<FeedbackStatus, number>;
  for (const row of rows) byStatus[row.status] = row.count;
  return { total: rows.reduce((sum, row) => sum + row.count, 0), by_status: byStatus };
}

/** One item of the project; null for a missing id and for an id of another project alike. */
export async function findFeedback(sql: SqlLike, projectId: string, id: string, viewer: string | undefined): Promise<FeedbackRow | null> {
  const [row] = await sql<FeedbackRow[]>`
    select ${feedbackColumns(sql, viewer)}
    from feedbacks f
    where f.id = ${id} and f.project_id = ${projectId}`;
  return row ?? null;
}

export type NewFeedback = {
  title: string;
  description: string;
  category: FeedbackCategory;
  userId: string;
  userEmail?: string | undefined;
  /** An anonymous board submission: hidden from public lists until an owner approves it. */
  awaitingApproval?: boolean | undefined;
};

export type CreateFeedbackResult = { kind: 'created'; feedback: FeedbackRow } | { kind: 'limit_reached'; limit: number };

/**
 * Creates an item with the creator's vote (vote_count 1, SPEC 3). The project row is locked
 * while counting, so concurrent creations cannot overshoot a tier's per-project limit. `viewer` is
 * the request's X-User-Id: has_voted is true only when it names the creator (SPEC 2.1), and false
 * without it.
 */
export async function createFeedback(
  sql: Sql,
  projectId: string,
  input: NewFeedback,
  maxFeedback: number | null,
  viewer: string | undefined,
): Promise<CreateFeedbackResult> {
  return sql.begin(async (tx) => {
    await tx`select 1 from projects where id = ${projectId} for update`;
    if (maxFeedback !== null) {
      const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
        select count(*)::int as count from feedbacks where project_id = ${projectId}`;
      if (count >= maxFeedback) return { kind: 'limit_reached', limit: maxFeedback };
    }
    const [created] = await tx<{ id: string }[]>`
      insert into feedbacks (project_id, title, description, category, user_id, user_email, vote_count, awaiting_approval)
      values (${projectId}, ${input.title}, ${input.description}, ${input.category},
              ${input.userId}, ${input.userEmail ?? null}, 1, ${input.awaitingApproval === true})
      returning id`;
    const id = (created as { id: string }).id;
    await tx`
      insert into votes (feedback_id, user_id, email)
      values (${id}, ${input.userId}, ${input.userEmail ?? null})`;
    await recordFact(tx, {
      kind: 'feedback_created',
      projectId,
      feedbackId: id,
      userId: input.userId,
      category: input.category,
      status: 'pending',
    });
    // The creator's vote counts like any other (SPEC 3), so it is a vote fact too.
    await recordFact(tx, { kind: 'vote_added', projectId, feedbackId: id, userId: input.userId });
    const feedback = (await findFeedback(tx, projectId, id, viewer)) as FeedbackRow;
    // Members and integrations hear of it (SPEC 1), after this commits; never within the request.
    await recordNotification(tx, feedbackCreated(feedback));
    return { kind: 'created', feedback };
  });
}

/** Locks one item of the project for the rest of the transaction; null when it is not there. */
export type LockedFeedback = {
  id: string;
  status: FeedbackStatus;
  merged_into_id: string | null;
  vote_count: number;
  awaiting_approval: boolean;
  user_id: string;
};

export async function lockFeedback(sql: SqlLike, projectId: string, id: string): Promise<LockedFeedback | null> {
  const [row] = await sql<LockedFeedback[]>`
    select id, status, merged_into_id, vote_count, awaiting_approval, user_id
    from feedbacks
    where id = ${id} and project_id = ${projectId}
    for update`;
  return row ?? null;
}

/**
 * Whether an item is hidden from `userId`: an anonymous submission held for the owner's approval
 * belongs to its author alone until approved (docs/widget.md). Every client route (get, comments,
 * vote, unvote, comment) answers such an item as missing to anyone else; the owners' routes do
 * not ask.
 */
export function heldFrom(item: { awaiting_approval: boolean; user_id: string }, userId: string | undefined): boolean {
  return item.awaiting_approval && item.user_id !== userId;
}

export type StatusChange = { status?: FeedbackStatus | undefined; rejectionReason?: string | null | undefined };

export type UpdateStatusResult =
  | { kind: 'updated'; feedback: FeedbackRow; previousStatus: FeedbackStatus }
  | { kind: 'not_found' }
  | { kind: 'reason_needs_rejected' }
  /** A merged item's status is its target's: it is not changed on its own. */
  | { kind: 'merged'; intoId: string };

/**
 * Sets status and/or rejection reason. A rejection reason belongs to rejected items only: it is
 * refused for any other resulting status and cleared when an item leaves `rejected`.
 */
export async function updateFeedbackStatus(sql: Sql, projectId: string, id: string, change: StatusChange): Promise<UpdateStatusResult> {
  return sql.begin((tx) => changeFeedbackStatus(tx, projectId, id, change));
}

/**
 * updateFeedbackStatus within the caller's transaction: also what publishing a changelog entry
 * with `complete_linked` does to each linked item, `foldedIntoEntry` naming the entry, whose
 * email then carries the change (the status-change notification reaches integrations only); and
 * a status set from an issue tracker, which records the issue's state in the same commit
 * (src/workers/trackers/inbound.worker.ts), its voters told as for any change.
 */
export async function changeFeedbackStatus(
  tx: SqlLike,
  projectId: string,
  id: string,
  change: StatusChange,
  options: { foldedIntoEntry?: string } = {},
): Promise<UpdateStatusResult> {
  const current = await lockFeedback(tx, projectId, id);
  if (!current) return { kind: 'not_found' as const };
  if (current.merged_into_id) return { kind: 'merged' as const, intoId: current.merged_into_id };
  const status = change.status ?? current.status;
  if (change.rejectionReason != null && status !== 'rejected') return { kind: 'reason_needs_rejected' as const };
  await tx`
    update feedbacks set
      status = ${status},
      rejection_reason = ${
        status !== 'rejected' ? null : change.rejectionReason !== undefined ? change.rejectionReason : tx`rejection_reason`
      },
      updated_at = now()
    where id = ${id}`;
  if (status !== current.status) {
    await recordFact(tx, {
      kind: 'feedback_status_changed',
      projectId,
      feedbackId: id,
      status,
      previousStatus: current.status,
    });
  }
  const feedback = (await findFeedback(tx, projectId, id, undefined)) as FeedbackRow;
  if (status !== current.status) await recordNotification(tx, feedbackStatusChanged(feedback, current.status, options.foldedIntoEntry));
  return { kind: 'updated' as const, feedback, previousStatus: current.status };
}

export type MergeResult =
  | { kind: 'merged'; source: FeedbackRow; target: FeedbackRow }
  | { kind: 'not_found'; which: 'source' | 'target' }
  | { kind: 'refused'; status: 400 | 409; reason: string };

type TransactionSql = postgres.TransactionSql<Record<string, never>>;
type MergeRow = { id: string; project_id: string; merged_into_id: string | null };

/** Thrown inside the savepoint of lockMergeRows to release its locks and take them again. */
class MergeSetChanged extends Error {}

/**
 * Locks every feedback row a merge writes, in one statement and in id order: the source, the
 * target, and the items merged into the source (they are re-pointed at the target). As every merge
 * takes its locks this way, concurrent merges wait for each other instead of deadlocking, e.g.
 * a→b, b→c and c→a at once: locking only source and target, b→c would hold b and c and then wait
 * for a (merged into b meanwhile) while c→a held a and waited for c.
 *
 * The items merged into the source are read before the source is locked. A merge into the source
 * that commits in between adds one the statement did not lock; locking it now would break the
 * order, so the savepoint is rolled back (releasing the locks) and the set read again. Once the
 * source is locked nobody else can merge into it, so the second round normally holds.
 */
async function lockMergeRows(tx: TransactionSql, sourceId: string, targetId: string): Promise<MergeRow[]> {
  const mergedIntoSource = async (sql: SqlLike) =>
    (await sql<{ id: string }[]>`select id from feedbacks where merged_into_id = ${sourceId}`).map((row) => row.id);
  for (;;) {
    try {
      return await tx.savepoint(async (sp) => {
        const ids = new Set([sourceId, targetId, ...(await mergedIntoSource(sp))]);
        const rows = await sp<MergeRow[]>`
          select id, project_id, merged_into_id from feedbacks
          where id in ${sp([...ids])}
          order by id
          for update`;
        if ((await mergedIntoSource(sp)).some((id) => !ids.has(id))) throw new MergeSetChanged();
        return rows;
      });
    } catch (error) {
      if (!(error instanceof MergeSetChanged)) throw error;
    }
  }
}

/**
 * Merges `sourceId` into `targetId` within one project: the source gets merged_into_id and
 * merged_at, its voters move to the target (a user who voted on both keeps one vote), its comments
 * move there prefixed "[Originally on: <title>] " (merge-comments.ts), and items
 * previously merged into the source now point at the target, so merges never form chains.
 */
export async function mergeFeedback(sql: Sql, projectId: string, sourceId: string, targetId: string): Promise<MergeResult> {
  if (sourceId === targetId) return { kind: 'refused', status: 400, reason: 'intoId: cannot merge a feedback into itself' };
  return sql.begin(async (tx) => {
    const rows = await lockMergeRows(tx, sourceId, targetId);
    const source = rows.find((row) => row.id === sourceId && row.project_id === projectId);
    const target = rows.find((row) => row.id === targetId && row.project_id === projectId);
    if (!source) return { kind: 'not_found' as const, which: 'source' as const };
    if (!target) {
      // Another project's item is reported like a missing one: ids of other projects are not revealed.
      return { kind: 'refused' as const, status: 400 as const, reason: 'intoId: no feedback with this id in this project' };
    }
    if (source.merged_into_id) {
      return { kind: 'refused' as const, status: 409 as const, reason: 'feedback is already merged' };
    }
    if (target.merged_into_id) {
      return { kind: 'refused' as const, status: 409 as const, reason: 'intoId: the target feedback is itself merged' };
    }
    // The source's voters, for the status-change emails of the merge (their votes move below).
    const sourceVoters = (await tx<{ user_id: string }[]>`select user_id from votes where feedback_id = ${sourceId}`).map(
      (row) => row.user_id,
    );
    await tx`
      with moved as (
        delete from votes where feedback_id = ${sourceId}
        returning user_id, email, notify_status_change, unsubscribe_token, created_at
      )
      insert into votes (feedback_id, user_id, email, notify_status_change, unsubscribe_token, created_at)
      select ${targetId}, user_id, email, notify_status_change, unsubscribe_token, created_at from moved
      on conflict (feedback_id, user_id) do update set
        -- A user who voted on both keeps one vote, and an opt-in on either item: the source's
        -- email and unsubscribe link when only the source vote had opted in.
        email = case when not votes.notify_status_change and excluded.notify_status_change
                     then coalesce(excluded.email, votes.email) else coalesce(votes.email, excluded.email) end,
        unsubscribe_token = case when not votes.notify_status_change and excluded.notify_status_change
                                 then excluded.unsubscribe_token else votes.unsubscribe_token end,
        notify_status_change = votes.notify_status_change or excluded.notify_status_change`;
    await tx`
      update feedbacks set
        vote_count = (select count(*) from votes where feedback_id = ${targetId}),
        updated_at = now()
      where id = ${targetId}`;
    await carryComments(tx, sourceId, targetId);
    await tx`
      update feedbacks set merged_into_id = ${targetId}, updated_at = now()
      where merged_into_id = ${sourceId}`;
    await tx`
      update feedbacks set vote_count = 0, merged_into_id = ${targetId}, merged_at = now(), updated_at = now()
      where id = ${sourceId}`;
    await recordFact(tx, { kind: 'feedback_merged', projectId, feedbackId: sourceId, mergedIntoId: targetId });
    const [mergedSource, mergedTarget] = await Promise.all([
      findFeedback(tx, projectId, sourceId, undefined),
      findFeedback(tx, projectId, targetId, undefined),
    ]);
    await recordNotification(tx, feedbackMerged(mergedSource as FeedbackRow, mergedTarget as FeedbackRow, sourceVoters));
    return { kind: 'merged' as const, source: mergedSource as FeedbackRow, target: mergedTarget as FeedbackRow };
  });
}

/** Publishes an anonymous submission (the moderation queue); null when the item is not the project's. */
export async function approveFeedback(sql: SqlLike, projectId: string, id: string): Promise<FeedbackRow | null> {
  const [updated] = await sql<{ id: string }[]>`
    update feedbacks set awaiting_approval = false, updated_at = now()
    where id = ${id} and project_id = ${projectId}
    returning id`;
  if (!updated) return null;
  return findFeedback(sql, projectId, id, undefined);
}
