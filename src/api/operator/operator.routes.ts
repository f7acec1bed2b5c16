import { z } from 'zod';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { createAccount, updateAccountPlan } from '../../oltp/accounts.repo.js';
import { listDeadLetters } from '../../oltp/dead-letters.repo.js';
import { updateProject } from '../../oltp/projects.repo.js';
import { defineRoute } from '../define-route.js';
import { conflict, notFound } from '../errors.js';
import { presentAccount, presentDeadLetters } from '../shared/account.presenter.js';
import { AccountResponse, AccountWithAdminTokenResponse, DeadLettersResponse } from '../shared/account.responses.js';
import { body, defaultError, describe, error, json, withFieldDocs } from '../shared/building-blocks.js';
import { CreateAccountBody, ListDeadLettersQuery, SuspendProjectBody, UpdateAccountBody } from '../shared/management.schema.js';
import { presentProject } from '../shared/projects.presenter.js';
import { ProjectResponse } from '../shared/projects.responses.js';

const deadLetterShape = ListDeadLettersQuery.shape;

/** Operator-only management (DESIGN 3): accounts, plans, suspension, dead letters. */
export const operatorRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/accounts',
    auth: 'operatorToken',
    operationId: 'createAccount',
    tags: ['Operator'],
    summary: 'Create an account',
    body: body(withFieldDocs(CreateAccountBody, { plan: 'Default: free.' }), 'CreateAccountRequest'),
    responses: {
      200: json('The account, with its admin token (shown only here).', AccountWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      409: error('An account with this email exists.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { body: input }) => {
      const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
      const account = await createAccount(sql, { ...input, adminTokenHash: hashSecret(adminToken) });
      if (!account) throw conflict('email: an account with this email already exists');
      ctx.body = presentAccount(account, adminToken);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/admin/accounts/:id',
    auth: 'operatorToken',
    operationId: 'updateAccountPlan',
    tags: ['Operator'],
    summary: 'Change an account’s plan',
    description: 'A downgrade keeps existing projects and items; only new ones are refused past the limit.',
    params: z.object({ id: describe(z.uuid({ error: 'account not found' }), 'Account id.') }),
    body: body(UpdateAccountBody, 'UpdateAccountPlanRequest'),
    responses: {
      200: json('The account.', AccountResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such account.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { params, body }) => {
      const account = await updateAccountPlan(sql, params.id, body.plan);
      if (!account) throw notFound('account not found');
      projectKeys.forgetAccount(account.id);
      ctx.body = presentAccount(account);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/admin/projects/:id',
    auth: 'operatorToken',
    operationId: 'suspendProject',
    tags: ['Operator'],
    summary: 'Suspend or reinstate a project',
    description: 'A suspended project’s API key gets 403 on every request.',
    params: z.object({ id: describe(z.uuid({ error: 'project not found' }), 'Project id.') }),
    body: body(SuspendProjectBody, 'SuspendProjectRequest'),
    responses: {
      200: json('The project.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such project.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { params, body }) => {
      const project = await updateProject(sql, params.id, { suspended: body.suspended });
      if (!project) throw notFound('project not found');
      projectKeys.forgetProject(project.id);
      ctx.body = presentProject(project);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/admin/dead-letters',
    auth: 'operatorToken',
    operationId: 'listDeadLetters',
    tags: ['Operator'],
    summary: 'List rows ClickHouse refused (dead letters)',
    description:
      'Events and facts ClickHouse refused for their data (a parse or value error, by error code), isolated from their batch so that every other row of it was stored. Newest first, with the total; also counted in the Prometheus counter `feedback_dead_letters_total{kind}`. See docs/dead-letters.md.',
    query: ListDeadLettersQuery.extend({
      kind: describe(deadLetterShape.kind, 'Only dead letters of this kind.'),
      project_id: describe(deadLetterShape.project_id, 'Only dead letters of this project.'),
      limit: describe(deadLetterShape.limit, 'Page size, 1 to 500 (default 50).'),
      offset: describe(deadLetterShape.offset, 'Dead letters to skip (default 0).'),
    }),
    responses: {
      200: json('A page of dead letters.', DeadLettersResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
    // Rows ClickHouse refused for their data (docs/dead-letters.md), newest first, with the total.
    handler: async (ctx, { sql }, { query }) => {
      const page = await listDeadLetters(sql, { kind: query.kind, projectId: query.project_id, limit: query.limit, offset: query.offset });
      ctx.body = presentDeadLetters(page, query);
    },
  }),
];
