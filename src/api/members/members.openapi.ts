import { z } from 'zod';
import {
  ADMIN_TOKEN,
  body,
  defaultError,
  describe,
  error,
  json,
  projectId,
  ProjectPath,
  projectRefused,
  withFieldDocs,
  type Route,
} from '../openapi/building-blocks.js';
import { CreateMemberBody } from './members.schema.js';
import { MemberResponse, MemberWithAdminTokenResponse } from './members.responses.js';

const ProjectMemberPath = z.object({
  id: projectId,
  memberId: describe(z.uuid(), 'Member id. 404 when it is not a member of this project (a malformed id too).'),
});

const requestBodies = () => ({
  createMember: body(
    withFieldDocs(CreateMemberBody, { email: 'Trimmed; unique per project whatever its letter case (409 otherwise).' }),
    'CreateMemberRequest',
  ),
});

/** Team members of a project and their admin tokens (SPEC 8.2). */
export function registerMemberPaths(route: Route) {
  const requests = requestBodies();
  const teamOnly = error('The account’s plan is not Team.');
  const notMember = error('No such project, or no such member in it.');
  const memberRefused = error(
    "The project belongs to another account, or is suspended; or a team member's token: only the account owner's token adds members or removes other members (a member may remove itself).",
  );

  route({
    method: 'post',
    path: '/projects/{id}/members',
    operationId: 'addMember',
    tags: ['Team members'],
    summary: 'Add a team member, with its own admin token',
    description:
      'Team plan only. The member gets its own admin token of the project’s account, shown only in this response: it acts as the account on every `/projects…` route (all of the account’s projects) while the plan is Team, and is revoked when the member is removed.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: requests.createMember },
    responses: {
      200: json('The member, with its admin token (shown only here).', MemberWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      402: teamOnly,
      403: memberRefused,
      404: error('No such project.'),
      409: error('The project already has a member with this email (in any letter case).'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/members',
    operationId: 'listMembers',
    tags: ['Team members'],
    summary: 'List a project’s team members',
    description:
      'Oldest first. Answers on every plan: members added on Team are kept after a downgrade (their tokens are refused until the plan is Team again).',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The members, without tokens.', z.array(MemberResponse)),
      401: error('Missing or invalid admin token.'),
      403: projectRefused,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/projects/{id}/members/{memberId}',
    operationId: 'removeMember',
    tags: ['Team members'],
    summary: 'Remove a team member',
    description: 'Revokes the member’s admin token at once. Allowed on every plan.',
    security: ADMIN_TOKEN,
    request: { params: ProjectMemberPath },
    responses: {
      200: json('The removed member.', MemberResponse),
      401: error('Missing or invalid admin token.'),
      403: memberRefused,
      404: notMember,
      default: defaultError,
    },
  });
}
