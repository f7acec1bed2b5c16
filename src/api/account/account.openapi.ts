import { ADMIN_TOKEN, defaultError, error, json, type Route } from '../openapi/building-blocks.js';
import { AccountResponse } from './account.responses.js';

/** The admin token's account and its plan. */
export function registerAccountPaths(route: Route) {
  route({
    method: 'get',
    path: '/account',
    operationId: 'getAccount',
    tags: ['Projects'],
    summary: 'The signed-in account and its plan',
    description:
      'The account of the admin token (the owner’s or a team member’s), its plan and what the plan allows, so a client can explain a plan gate before a request is refused with 402.',
    security: ADMIN_TOKEN,
    responses: {
      200: json('The account.', AccountResponse),
      401: error('Missing or invalid admin token, or a team member’s token while the plan is not Team.'),
      default: defaultError,
    },
  });
}
