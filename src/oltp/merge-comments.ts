import type { SqlLike } from './db.js';

/** A comment's content is at most this long (SPEC 6; the comments table checks it). */
const MAX_COMMENT_LENGTH = 2000;
const PREFIX_START = '[Originally on: ';

/** The prefix the origin's merge put before each carried comment: "[Originally on: <title>] ". */
export const originallyOn = (title: string) => `${PREFIX_START}${title}] `;

/**
 * Carries the comments of a merged item to its target, as the origin's merge did, each prefixed
 * "[Originally on: <source title>] " so the thread still says where it was written. Unlike the
 * origin (which copied them as new comments), the rows move: they keep their id, author and
 * created_at, so the target's thread stays in the order things were said, and a deletion or
 * erasure of the author still finds them. A comment that already carries a prefix (it came from
 * an item merged into the source earlier) keeps the first one: it names where it was written.
 * A prefixed comment longer than the 2,000 characters a comment may have is cut, ending in "…".
 *
 * Runs inside the merge's transaction, which holds both items' row locks, so no comment is added
 * to the source meanwhile; the counters move with the rows. Returns how many moved.
 */
export async function carryComments(tx: SqlLike, sourceId: string, targetId: string): Promise<number> {
  const [source] = await tx<{ title: string }[]>`select title from feedbacks where id = ${sourceId}`;
  if (!source) return 0;
  const prefix = originallyOn(source.title);
  const [moved] = await tx<{ count: number }[]>`
    with moved as (
      update comments set
        feedback_id = ${targetId},
        content = case
          when starts_with(content, ${PREFIX_START}) then content
          when char_length(${prefix} || content) <= ${MAX_COMMENT_LENGTH} then ${prefix} || content
          else left(${prefix} || content, ${MAX_COMMENT_LENGTH - 1}) || '…'
        end
      where feedback_id = ${sourceId}
      returning 1
    )
    select count(*)::int as count from moved`;
  const count = moved?.count ?? 0;
  if (count > 0) {
    await tx`update feedbacks set comment_count = comment_count + ${count} where id = ${targetId}`;
    await tx`update feedbacks set comment_count = 0 where id = ${sourceId}`;
  }
  return count;
}
