import type { MemberRow } from '../../oltp/members.repo.js';

/** Team member of a project; the member's admin token appears only when the member is added. */
export function presentMember(row: MemberRow, adminToken?: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    email: row.email,
    created_at: row.created_at.toISOString(),
    ...(adminToken === undefined ? {} : { admin_token: adminToken }),
  };
}
