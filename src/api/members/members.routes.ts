import { Router } from '@koa/router';
import { createMember, deleteMember, listMembers } from '../../oltp/members.repo.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { conflict, forbidden, notFound, paymentRequired } from '../errors.js';
import { CreateMemberBody } from './members.schema.js';
import { presentMember } from './members.presenter.js';
import type { AppState } from '../state.js';
import { isUuid, parseBody } from '../validation.js';

/**
 * Team members of a project (SPEC 8.2: Team tier). A member gets its own admin token of the
 * project's account. Only adding needs the Team plan: after a downgrade the members are kept,
 * listed and removable, while their tokens stop authenticating (adminAuth).
 *
 * Only the owner's token adds members or removes others (a member may remove itself): a member
 * who could mint tokens would keep access through them after the owner removed it.
 */
const OWNER_ONLY = "team members are added and removed with the account owner's admin token (a member may remove itself)";

export function membersRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.post('/projects/:id/members', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    if (ctx.state.memberId) throw forbidden(OWNER_ONLY);
    if (!PLAN_LIMITS[project.plan].teamMembers) throw paymentRequired('team members require the Team plan');
    const body = parseBody(CreateMemberBody, ctx.request.body);
    const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
    const member = await createMember(sql, {
      projectId: project.id,
      accountId: project.account_id,
      email: body.email,
      adminTokenHash: hashSecret(adminToken),
    });
    if (!member) throw conflict('email: this project already has a member with this email');
    ctx.body = presentMember(member, adminToken);
  });

  router.get('/projects/:id/members', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const rows = await listMembers(sql, project.id);
    ctx.body = rows.map((row) => presentMember(row));
  });

  router.delete('/projects/:id/members/:memberId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = ctx.params.memberId ?? '';
    if (ctx.state.memberId && ctx.state.memberId !== id) throw forbidden(OWNER_ONLY);
    const member = isUuid(id) ? await deleteMember(sql, project.id, id) : null;
    if (!member) throw notFound('member not found');
    ctx.body = presentMember(member);
  });

  return router;
}
