import { defineRoute } from '../define-route.js';
import { unauthorized } from '../errors.js';
import { defaultError, error, json } from '../shared/building-blocks.js';
import { presentAccount } from './account.presenter.js';
import { AccountResponse } from './account.responses.js';

/** The signed-in account and its plan (admin token), so the dashboard explains plan gates up front. */
export const accountRoutes = [
  defineRoute({
    method: 'get',
    path: '/account',
    auth: 'adminToken',
    operationId: 'getAccount',
    tags: ['Projects'],
    summary: 'The signed-in account and its plan',
    description:
      'The account of the admin token (the owner’s or a team member’s), its plan and what the plan allows, so a client can explain a plan gate before a request is refused with 402.',
    responses: {
      200: json('The account.', AccountResponse),
      401: error('Missing or invalid admin token, or a team member’s token while the plan is not Team.'),
      default: defaultError,
    },
    handler: (ctx) => {
      const account = ctx.state.account;
      if (!account) throw unauthorized('missing admin bearer token');
      ctx.body = presentAccount(account, ctx.state.memberId ?? null);
    },
  }),
];
