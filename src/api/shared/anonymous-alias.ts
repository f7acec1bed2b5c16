import { createHash } from 'node:crypto';

/** Anonymous visitors name themselves with ids of this shape (the board makes one per browser). */
export const ANONYMOUS_USER_ID = /^anon-[0-9a-z-]{8,64}$/;

/**
 * How an anonymous visitor's id is shown to everyone but that visitor (docs/widget.md, "Anonymous
 * visitors"). The raw `anon-…` id is the visitor's only credential with the publishable key: shown
 * in a public list, anyone could comment, vote or read held submissions as that visitor. The alias
 * is stable per project (one visitor's comments read as one author), cannot be turned back into
 * the id (a hash of 122 random bits), and cannot act: the publishable key accepts only `anon-…`
 * ids, and `visitor-…` is not one.
 */
export function publicUserId(projectId: string, userId: string, viewer: string | undefined): string {
  if (userId === viewer || !ANONYMOUS_USER_ID.test(userId)) return userId;
  const digest = createHash('sha256').update(`${projectId}:${userId}`).digest('hex');
  return `visitor-${digest.slice(0, 16)}`;
}
