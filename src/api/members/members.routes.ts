import { z } from 'zod';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { createMember, deleteMember, listMembers } from '../../oltp/members.repo.js';
import { defineRoute } from '../define-route.js';
import { conflict, forbidden, notFound } from '../errors.js';
import { body, defaultError, describe, error, json, ProjectPath, projectId, withFieldDocs } from '../shared/building-blocks.js';
import { presentMember } from './members.presenter.js';
import { MemberResponse, MemberWithAdminTokenResponse } from './members.responses.js';
import { CreateMemberBody } from './members.schema.js';

const OWNER_ONLY = "team members are added and removed with the account owner's admin token (a member may remove itself)";

const ProjectMemberPath = z.object({
  id: projectId,
  memberId: describe(z.uuid({ error: 'member not found' }), 'Member id. 404 when it is not a member of this project (a malformed id too).'),
});
const teamOnly = error('The account’s plan is not Team.');
const notMember = error('No such project, or no such member in it.');
const memberRefused = error(
  "The project belongs to another account, or is suspended; or a team member's token: only the account owner's token adds members or removes other members (a member may remove itself).",
);

/**
 * Team members of a project (SPEC 8.2: Team tier). A member gets its own admin token of the
 * project's account. Only adding needs the Team plan: after a downgrade the members are kept,
 * listed and removable, while their tokens stop authenticating (adminAuth).
 *
 * Only the owner's token adds members or removes others (a member may remove itself): a member
 * who could mint tokens would keep access through them after the owner removed it.
 */
export const memberRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/members',
    auth: 'projectAdmin',
    projectRules: { ownerOnly: OWNER_ONLY, plan: { feature: 'teamMembers', reason: 'team members require the Team plan' } },
    operationId: 'addMember',
    tags: ['Team members'],
    summary: 'Add a team member, with its own admin token',
    description:
      'Team plan only. The member gets its own admin token of the project’s account, shown only in this response: it acts as the account on every `/projects…` route (all of the account’s projects) while the plan is Team, and is revoked when the member is removed.',
    params: ProjectPath,
    body: body(
      withFieldDocs(CreateMemberBody, { email: 'Trimmed; unique per project whatever its letter case (409 otherwise).' }),
      'CreateMemberRequest',
    ),
    responses: {
      200: json('The member, with its admin token (shown only here).', MemberWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      402: teamOnly,
      403: memberRefused,
      409: error('The project already has a member with this email (in any letter case).'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, body }) => {
      const input = body;
      const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
      const member = await createMember(sql, {
        projectId: project.id,
        accountId: project.account_id,
        email: input.email,
        adminTokenHash: hashSecret(adminToken),
      });
      if (!member) throw conflict('email: this project already has a member with this email');
      ctx.body = presentMember(member, adminToken);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/members',
    auth: 'projectAdmin',
    operationId: 'listMembers',
    tags: ['Team members'],
    summary: 'List a project’s team members',
    description:
      'Oldest first. Answers on every plan: members added on Team are kept after a downgrade (their tokens are refused until the plan is Team again).',
    params: ProjectPath,
    responses: {
      200: json('The members, without tokens.', z.array(MemberResponse)),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project }) => {
      const rows = await listMembers(sql, project.id);
      ctx.body = rows.map((row) => presentMember(row));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/members/:memberId',
    auth: 'projectAdmin',
    operationId: 'removeMember',
    tags: ['Team members'],
    summary: 'Remove a team member',
    description: 'Revokes the member’s admin token at once. Allowed on every plan.',
    params: ProjectMemberPath,
    responses: {
      200: json('The removed member.', MemberResponse),
      403: memberRefused,
      404: notMember,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const id = params.memberId;
      if (ctx.state.memberId && ctx.state.memberId !== id) throw forbidden(OWNER_ONLY);
      const member = await deleteMember(sql, project.id, id);
      if (!member) throw notFound('member not found');
      ctx.body = presentMember(member);
    },
  }),
];
