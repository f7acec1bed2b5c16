import { apiTime } from '../../core/time.js';
import type { SdkUserPage, SdkUserRow } from '../../oltp/sdk-users.repo.js';

/**
 * SDK user, SPEC 2.6, with the fields the origin's Kotlin SDK decodes beside them (docs/clients.md):
 * `external_id` (the user id again), `email` and `name`. For the owner (admin token) and the user's
 * own signed token; see presentRegisteredUser and presentPublicSdkUser for what others get.
 */
export function presentSdkUser(row: SdkUserRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    external_id: row.user_id,
    mrr: row.mrr,
    email: row.email,
    name: row.name,
    first_seen_at: apiTime(row.first_seen_at),
    last_seen_at: apiTime(row.last_seen_at),
  };
}

/**
 * The answer to POST /users/register: the SDK user, with `email` and `name` as this request sent
 * them (null when it sent none), never the stored ones. Anyone with the API key may register any
 * user id, so the stored email of a user must not come back to whoever names them.
 */
export function presentRegisteredUser(row: SdkUserRow, sent: { email?: string | null | undefined; name?: string | null | undefined }) {
  return { ...presentSdkUser(row), email: sent.email ?? null, name: sent.name ?? null };
}

/**
 * GET /users/:userId without the user's own token: who the user is and when they were seen, and
 * nothing private (no email, name or MRR: docs/clients.md, "Reading one SDK user").
 */
export function presentPublicSdkUser(row: SdkUserRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    external_id: row.user_id,
    first_seen_at: apiTime(row.first_seen_at),
    last_seen_at: apiTime(row.last_seen_at),
  };
}

/** One page of a project's SDK users, with how many it has in all. */
export function presentSdkUserPage(page: SdkUserPage) {
  return { total: page.total, users: page.users.map(presentSdkUser) };
}
