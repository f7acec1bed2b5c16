import type { Account } from './accounts.repo.js';
import type { Sql, SqlLike } from './db.js';

/** An account as the operator sees it: with how many projects and owner tokens it has. */
export type AccountSummary = Account & { project_count: number; admin_token_count: number };

const summaryColumns = (sql: SqlLike) => sql`
  a.id, a.email, a.plan, a.created_at, a.updated_at,
  (select count(*)::int from projects p where p.account_id = a.id) as project_count,
  (select count(*)::int from admin_tokens t where t.account_id = a.id and t.member_id is null) as admin_token_count`;

/** The account with this (lower-cased) email, or null. */
export async function findAccountByEmail(sql: SqlLike, email: string): Promise<AccountSummary | null> {
  const [row] = await sql<AccountSummary[]>`
    select ${summaryColumns(sql)}
    from accounts a
    where a.email = ${email}`;
  return row ?? null;
}

/** Keyset position of the account listing: the (created_at, id) of the last row of a page. */
export type AccountCursor = { createdAt: string; id: string };

/**
 * One page of accounts, oldest first, after `cursor`. The cursor's created_at travels as text with
 * its microseconds and is cast in SQL (`::text::timestamptz`): a parameter typed timestamptz would
 * go through a JS Date, lose them, and repeat the previous page's last row.
 */
export async function listAccounts(
  sql: SqlLike,
  page: { limit: number; after?: AccountCursor | undefined },
): Promise<(AccountSummary & { cursor_time: string })[]> {
  return sql<(AccountSummary & { cursor_time: string })[]>`
    select ${summaryColumns(sql)},
      to_char(a.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as cursor_time
    from accounts a
    ${page.after ? sql`where (a.created_at, a.id) > (${page.after.createdAt}::text::timestamptz, ${page.after.id}::uuid)` : sql``}
    order by a.created_at, a.id
    limit ${page.limit}`;
}

export type IssueTokenResult = { account: Account; revoked: number } | null;

/**
 * Issues a new owner admin token of the account (stored as a hash). With `revokeOthers`, the
 * account's other owner tokens are deleted in the same transaction: a lost or leaked token stops
 * working the moment the new one exists. Team members' own tokens are not touched (they are
 * revoked by removing the member). Null when the account does not exist.
 */
export async function issueAdminToken(
  sql: Sql,
  accountId: string,
  input: { tokenHash: Buffer; revokeOthers: boolean },
): Promise<IssueTokenResult> {
  return sql.begin(async (tx) => {
    const [account] = await tx<Account[]>`
      select id, email, plan, created_at, updated_at from accounts where id = ${accountId} for update`;
    if (!account) return null;
    let revoked = 0;
    if (input.revokeOthers) {
      const deleted = await tx`delete from admin_tokens where account_id = ${accountId} and member_id is null returning 1`;
      revoked = deleted.length;
    }
    await tx`insert into admin_tokens (account_id, token_hash) values (${accountId}, ${input.tokenHash})`;
    return { account, revoked };
  });
}
