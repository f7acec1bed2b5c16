import type { Plan } from '../core/plans.js';
import type { SqlLike } from './db.js';

export type Account = { id: string; email: string; plan: Plan; created_at: Date; updated_at: Date };

/** Creates an account with its first admin token (stored as a hash). Null when the email is taken. */
export async function createAccount(sql: SqlLike, input: { email: string; plan: Plan; adminTokenHash: Buffer }): Promise<Account | null> {
  const [account] = await sql<Account[]>`
    with account as (
      insert into accounts (email, plan)
      values (${input.email}, ${input.plan})
      on conflict (email) do nothing
      returning *
    ), token as (
      insert into admin_tokens (account_id, token_hash)
      select id, ${input.adminTokenHash} from account
    )
    select id, email, plan, created_at, updated_at from account`;
  return account ?? null;
}

export async function updateAccountPlan(sql: SqlLike, id: string, plan: Plan): Promise<Account | null> {
  const [account] = await sql<Account[]>`
    update accounts set plan = ${plan}, updated_at = now()
    where id = ${id}
    returning id, email, plan, created_at, updated_at`;
  return account ?? null;
}

/** The account an admin token belongs to, and the team member it was issued to (null: the owner's). */
export type AdminTokenOwner = { account: Account; memberId: string | null };

/**
 * Looks an admin token up by its hash: one probe of the unique index, joined to its account, so
 * the caller can also refuse a member's token when the plan no longer includes team members.
 */
export async function findAccountByAdminTokenHash(sql: SqlLike, tokenHash: Buffer): Promise<AdminTokenOwner | null> {
  const [row] = await sql<(Account & { member_id: string | null })[]>`
    select a.id, a.email, a.plan, a.created_at, a.updated_at, t.member_id
    from admin_tokens t
    join accounts a on a.id = t.account_id
    where t.token_hash = ${tokenHash}`;
  if (!row) return null;
  const { member_id: memberId, ...account } = row;
  return { account, memberId };
}
