import type { SqlLike } from './db.js';

export type MemberRow = { id: string; project_id: string; email: string; created_at: Date };

/**
 * Adds a member to a project together with the member's own admin token of the account (stored
 * as a hash), in one statement. Null when the project already has a member with this email in
 * any letter case (the unique index on `lower(email)`).
 */
export async function createMember(
  sql: SqlLike,
  input: { projectId: string; accountId: string; email: string; adminTokenHash: Buffer },
): Promise<MemberRow | null> {
  const [member] = await sql<MemberRow[]>`
    with member as (
      insert into project_members (project_id, email)
      values (${input.projectId}, ${input.email})
      on conflict (project_id, lower(email)) do nothing
      returning id, project_id, email, created_at
    ), token as (
      insert into admin_tokens (account_id, token_hash, member_id)
      select ${input.accountId}, ${input.adminTokenHash}, id from member
    )
    select id, project_id, email, created_at from member`;
  return member ?? null;
}

export async function listMembers(sql: SqlLike, projectId: string): Promise<MemberRow[]> {
  return sql<MemberRow[]>`
    select id, project_id, email, created_at
    from project_members
    where project_id = ${projectId}
    order by created_at, id`;
}

/** Removes a member of the project; its admin token goes with it (on delete cascade). */
export async function deleteMember(sql: SqlLike, projectId: string, id: string): Promise<MemberRow | null> {
  const [member] = await sql<MemberRow[]>`
    delete from project_members
    where id = ${id} and project_id = ${projectId}
    returning id, project_id, email, created_at`;
  return member ?? null;
}
