import { apiTime } from '../../core/time.js';
import type { Account } from '../../oltp/accounts.repo.js';
import type { AccountSummary } from '../../oltp/admin-accounts.repo.js';
import type { DeadLetterRow } from '../../oltp/dead-letters.repo.js';

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

/** A page of dead letters as the operator route returns it. */
export function presentDeadLetters(page: { total: number; rows: DeadLetterRow[] }, query: { limit: number; offset: number }) {
  return {
    total: page.total,
    limit: query.limit,
    offset: query.offset,
    dead_letters: page.rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      project_id: row.project_id,
      row_key: row.row_key,
      payload: row.payload,
      error_code: row.error_code,
      error_name: row.error_name,
      error: row.error,
      created_at: apiTime(row.created_at),
    })),
  };
}

/** An account in the operator's listing: the account record and what hangs on it. */
export function presentAccountSummary(row: AccountSummary) {
  return { ...presentAccount(row), project_count: row.project_count, admin_token_count: row.admin_token_count };
}
