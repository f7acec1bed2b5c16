import type { Sql, SqlLike } from './db.js';
import { heldFrom, lockFeedback } from './feedback.repo.js';
import { recordFact } from './outbox.repo.js';

export type CommentRow = { id: string; feedback_id: string; content: string; user_id: string; is_admin: boolean; created_at: Date };

/**
 * Comments of one item, oldest first; null when the item is not in the project, or is a held
 * anonymous submission and `reader` is given and is not its author (feedback.repo.ts, heldFrom).
 * The owners' routes give no reader: they see every item.
 */
export async function listComments(
  sql: SqlLike,
  projectId: string,
  feedbackId: string,
  reader?: { userId: string | undefined },
): Promise<CommentRow[] | null> {
  const [feedback] = await sql<{ awaiting_approval: boolean; user_id: string }[]>`
    select awaiting_approval, user_id from feedbacks where id = ${feedbackId} and project_id = ${projectId}`;
  if (!feedback || (reader && heldFrom(feedback, reader.userId))) return null;
  return sql<CommentRow[]>`
    select id, feedback_id, content, user_id, is_admin, created_at
    from comments
    where feedback_id = ${feedbackId}
    order by created_at asc, seq asc`;
}

/** Who posted an owner's reply with the admin token: the account, and the member whose token it was. */
export type CommentAuthor = { accountId: string; memberId: string | null };

/** The user_id an owner's reply answers (SPEC 2.5 has one for every comment): the author, by kind and id. */
export function authorUserId(author: CommentAuthor): string {
  return author.memberId === null ? `account:${author.accountId}` : `member:${author.memberId}`;
}

/**
 * Adds a comment and bumps comment_count in the same transaction; null when the item is not there,
 * or is a held anonymous submission of another user (heldFrom). `author` is given for a reply
 * posted with the admin token, and recorded with the comment.
 */
export async function addComment(
  sql: Sql,
  projectId: string,
  feedbackId: string,
  input: { content: string; userId: string; isAdmin: boolean; author?: CommentAuthor | undefined },
): Promise<CommentRow | null> {
  return sql.begin(async (tx) => {
    const feedback = await lockFeedback(tx, projectId, feedbackId);
    if (!feedback || heldFrom(feedback, input.userId)) return null;
    return insertComment(tx, projectId, feedbackId, input);
  });
}

/** Inserts the comment, counts it on its item and records the fact; the item is locked by the caller. */
async function insertComment(
  tx: SqlLike,
  projectId: string,
  feedbackId: string,
  input: { content: string; userId: string; isAdmin: boolean; author?: CommentAuthor | undefined },
): Promise<CommentRow> {
  const [comment] = await tx<CommentRow[]>`
    insert into comments (feedback_id, user_id, content, is_admin, author_account_id, author_member_id)
    values (${feedbackId}, ${input.userId}, ${input.content}, ${input.isAdmin},
            ${input.author?.accountId ?? null}, ${input.author?.memberId ?? null})
    returning id, feedback_id, content, user_id, is_admin, created_at`;
  await tx`
    update feedbacks set comment_count = comment_count + 1, updated_at = now()
    where id = ${feedbackId}`;
  const created = comment as CommentRow;
  await recordFact(tx, {
    kind: 'comment_added',
    projectId,
    feedbackId,
    userId: input.userId,
    commentId: created.id,
    isAdmin: input.isAdmin,
  });
  return created;
}

export type OwnerReplyResult = { kind: 'added'; comment: CommentRow } | { kind: 'not_found' } | { kind: 'merged'; intoId: string };

/**
 * An owner's reply (admin token): marked is_admin, attributed to the account or the member, never
 * to an SDK user. Refused on a merged item: its conversation moved to the item it was merged into
 * (the merge carried its comments there), and a reply left behind would not be read.
 */
export async function addOwnerReply(
  sql: Sql,
  projectId: string,
  feedbackId: string,
  input: { content: string; author: CommentAuthor },
): Promise<OwnerReplyResult> {
  return sql.begin(async (tx) => {
    const feedback = await lockFeedback(tx, projectId, feedbackId);
    if (!feedback) return { kind: 'not_found' as const };
    if (feedback.merged_into_id) return { kind: 'merged' as const, intoId: feedback.merged_into_id };
    const comment = await insertComment(tx, projectId, feedbackId, {
      content: input.content,
      userId: authorUserId(input.author),
      isAdmin: true,
      author: input.author,
    });
    return { kind: 'added' as const, comment };
  });
}
