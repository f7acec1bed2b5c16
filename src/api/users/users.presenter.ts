import { apiTime } from '../../core/time.js';
import type { SdkUserPage, SdkUserRow } from '../../oltp/sdk-users.repo.js';

/** SDK user, SPEC 2.6. */
export function presentSdkUser(row: SdkUserRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    mrr: row.mrr,
    first_seen_at: apiTime(row.first_seen_at),
    last_seen_at: apiTime(row.last_seen_at),
  };
}

/** One page of a project's SDK users, with how many it has in all. */
export function presentSdkUserPage(page: SdkUserPage) {
  return { total: page.total, users: page.users.map(presentSdkUser) };
}
