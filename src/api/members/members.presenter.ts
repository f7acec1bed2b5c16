import { apiTime } from '../../core/time.js';
import type { MemberRow } from '../../oltp/members.repo.js';

/** Team member of a project; the member's admin token appears only when the member is added. */
export function presentMember(row: MemberRow, adminToken?: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    email: row.email,
    created_at: apiTime(row.created_at),
    ...(adminToken === undefined ? {} : { admin_token: adminToken }),
  };
}
