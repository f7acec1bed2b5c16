import { z } from 'zod';
import { PLAN_LIMITS } from '../../core/plans.js';
import { API_KEY_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { createProject, listProjects, type Project, replaceApiKey, updateProject } from '../../oltp/projects.repo.js';
import { defineRoute } from '../define-route.js';
import { paymentRequired, unauthorized } from '../errors.js';
import { body, defaultError, error, json, ProjectPath } from '../shared/building-blocks.js';
import { CreateProjectBody, UpdateProjectBody } from '../shared/management.schema.js';
import { presentProject } from '../shared/projects.presenter.js';
import { ProjectResponse, ProjectWithApiKeyResponse } from '../shared/projects.responses.js';
import type { RequestContext } from '../state.js';

function accountOf(ctx: RequestContext) {
  const account = ctx.state.account;
  if (!account) throw unauthorized('missing admin bearer token');
  return account;
}

/** Projects of the admin token's account (DESIGN 3). */
export const projectRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects',
    auth: 'adminToken',
    operationId: 'createProject',
    tags: ['Projects'],
    summary: 'Create a project',
    body: body(CreateProjectBody, 'CreateProjectRequest'),
    responses: {
      200: json('The project, with its API key (shown only here and on rotation).', ProjectWithApiKeyResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      402: error(
        `The plan’s project limit is reached (Free ${PLAN_LIMITS.free.maxProjects}, Pro ${PLAN_LIMITS.pro.maxProjects}, Team unlimited).`,
      ),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { body: input }) => {
      const account = accountOf(ctx);
      const apiKey = newSecret(API_KEY_PREFIX);
      const result = await createProject(sql, {
        accountId: account.id,
        name: input.name,
        apiKeyHash: hashSecret(apiKey),
        maxProjects: PLAN_LIMITS[account.plan].maxProjects,
      });
      if (result.kind === 'limit_reached') {
        throw paymentRequired(`the ${account.plan} plan allows ${result.limit} project${result.limit === 1 ? '' : 's'}`);
      }
      ctx.body = presentProject(result.project, apiKey);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects',
    auth: 'adminToken',
    operationId: 'listProjects',
    tags: ['Projects'],
    summary: 'List the account’s projects',
    responses: {
      200: json('The projects, without keys.', z.array(ProjectResponse)),
      401: error('Missing or invalid admin token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }) => {
      const rows = await listProjects(sql, accountOf(ctx).id);
      ctx.body = rows.map((row) => presentProject(row));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id',
    auth: 'projectAdmin',
    projectRules: { allowSuspended: true },
    operationId: 'getProject',
    tags: ['Projects'],
    summary: 'Get a project',
    description: 'Also answers for a suspended project.',
    params: ProjectPath,
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      default: defaultError,
    },
    handler: async (ctx, _deps, { project }) => {
      ctx.body = presentProject(project);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/projects/:id',
    auth: 'projectAdmin',
    projectRules: { allowSuspended: true },
    operationId: 'updateProject',
    tags: ['Projects'],
    summary: 'Rename or archive a project, or change its web-page settings',
    description: 'An archived project is read-only for feedback: creating items, voting, unvoting and commenting are 403.',
    params: ProjectPath,
    body: body(
      UpdateProjectBody,
      'UpdateProjectRequest',
      'At least one field. `allowedOrigins` replaces the project’s list of browser origins (exact origins such as `https://app.example.com`; `[]` allows any origin again); `requireSignedIdentity`, `boardPublic` and `anonymousFeedback` are the web-page settings of docs/widget.md; `sessionTimeoutMinutes` (1 to 1440) is the session timeout of docs/sessions.md.',
    ),
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { project, body }) => {
      const input = body;
      const updated = (await updateProject(sql, project.id, input)) as Project;
      projectKeys.forgetProject(project.id);
      ctx.body = presentProject(updated);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/api-keys',
    auth: 'projectAdmin',
    operationId: 'rotateApiKey',
    tags: ['Projects'],
    summary: 'Rotate the project’s API key',
    description: 'The old key stops working at once.',
    params: ProjectPath,
    responses: {
      200: json('The project with its new API key.', ProjectWithApiKeyResponse),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { project }) => {
      const apiKey = newSecret(API_KEY_PREFIX);
      const updated = (await replaceApiKey(sql, project.id, hashSecret(apiKey))) as Project;
      // The old key stops here at once; other processes hear of it through NOTIFY.
      projectKeys.forgetProject(project.id);
      ctx.body = presentProject(updated, apiKey);
    },
  }),
];
