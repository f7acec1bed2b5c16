import { z } from 'zod';
import { OPERATOR_TOKEN, body, defaultError, describe, error, json, withFieldDocs, type Route } from '../openapi/building-blocks.js';
import { ProjectResponse } from '../projects/projects.responses.js';
import { CreateAccountBody, ListDeadLettersQuery, SuspendProjectBody, UpdateAccountBody } from './management.schema.js';
import { AccountResponse, AccountWithAdminTokenResponse, DeadLettersResponse } from './operator.responses.js';

const requestBodies = () => ({
  createAccount: body(withFieldDocs(CreateAccountBody, { plan: 'Default: free.' }), 'CreateAccountRequest'),
  updateAccountPlan: body(UpdateAccountBody, 'UpdateAccountPlanRequest'),
  suspendProject: body(SuspendProjectBody, 'SuspendProjectRequest'),
});

/** Accounts, plans, suspension and dead letters, with the operator token (DESIGN 3). */
export function registerOperatorPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'post',
    path: '/admin/accounts',
    operationId: 'createAccount',
    tags: ['Operator'],
    summary: 'Create an account',
    security: OPERATOR_TOKEN,
    request: { body: requests.createAccount },
    responses: {
      200: json('The account, with its admin token (shown only here).', AccountWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      409: error('An account with this email exists.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/admin/accounts/{id}',
    operationId: 'updateAccountPlan',
    tags: ['Operator'],
    summary: 'Change an account’s plan',
    description: 'A downgrade keeps existing projects and items; only new ones are refused past the limit.',
    security: OPERATOR_TOKEN,
    request: { params: z.object({ id: describe(z.uuid(), 'Account id.') }), body: requests.updateAccountPlan },
    responses: {
      200: json('The account.', AccountResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such account.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/admin/projects/{id}',
    operationId: 'suspendProject',
    tags: ['Operator'],
    summary: 'Suspend or reinstate a project',
    description: 'A suspended project’s API key gets 403 on every request.',
    security: OPERATOR_TOKEN,
    request: { params: z.object({ id: describe(z.uuid(), 'Project id.') }), body: requests.suspendProject },
    responses: {
      200: json('The project.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  const deadLetterShape = ListDeadLettersQuery.shape;
  route({
    method: 'get',
    path: '/admin/dead-letters',
    operationId: 'listDeadLetters',
    tags: ['Operator'],
    summary: 'List rows ClickHouse refused (dead letters)',
    description:
      'Events and facts ClickHouse refused for their data (a parse or value error, by error code), isolated from their batch so that every other row of it was stored. Newest first, with the total; also counted in the Prometheus counter `feedback_dead_letters_total{kind}`. See docs/dead-letters.md.',
    security: OPERATOR_TOKEN,
    request: {
      query: ListDeadLettersQuery.extend({
        kind: describe(deadLetterShape.kind, 'Only dead letters of this kind.'),
        project_id: describe(deadLetterShape.project_id, 'Only dead letters of this project.'),
        limit: describe(deadLetterShape.limit, 'Page size, 1 to 500 (default 50).'),
        offset: describe(deadLetterShape.offset, 'Dead letters to skip (default 0).'),
      }),
    },
    responses: {
      200: json('A page of dead letters.', DeadLettersResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
  });
}
