import { apiTime } from '../../core/time.js';
import type { Account } from '../../oltp/accounts.repo.js';

/** Account record; the admin token appears only when the account is created. */
export function presentAccount(row: Account, adminToken?: string) {
  return {
    id: row.id,
    email: row.email,
    plan: row.plan,
    ...(adminToken === undefined ? {} : { admin_token: adminToken }),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
