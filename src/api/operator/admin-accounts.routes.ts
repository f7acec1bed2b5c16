import { z } from 'zod';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { type AccountCursor, findAccountByEmail, issueAdminToken, listAccounts } from '../../oltp/admin-accounts.repo.js';
import { defineRoute } from '../define-route.js';
import { badRequest, notFound } from '../errors.js';
import { presentAccount, presentAccountSummary } from '../shared/account.presenter.js';
import { body, describe, error, json, optionalBody, withFieldDocs } from '../shared/building-blocks.js';
import { AccountListResponse, IssuedAdminTokenResponse } from '../shared/data-rights.responses.js';
import { isUuid } from '../validation.js';
import { IssueAdminTokenBody, ListAccountsQuery } from './admin-accounts.schema.js';

const encodeCursor = (cursor: AccountCursor) => Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');

function decodeCursor(value: string): AccountCursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string' && isUuid(id) && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, id };
    }
  } catch {
    // falls through to the 400
  }
  throw badRequest('cursor: is not one this API returned');
}

/** The data-rights routes' `default` response (docs/data-rights.md), which these two share. */
const defaultError = error(
  'Any other failure, in the server-wide error body: 405 with `Allow`, 500, 503 with `Retry-After` while the service shuts down.',
);

const listShape = ListAccountsQuery.shape;

/**
 * Operator tools for accounts (issue 16): find an account by email or page through all of them,
 * and issue a new owner admin token (a lost one cannot be shown again: only its hash is stored),
 * optionally revoking the others.
 */
export const adminAccountRoutes = [
  defineRoute({
    method: 'get',
    path: '/admin/accounts',
    auth: 'operatorToken',
    operationId: 'listAccounts',
    tags: ['Operator'],
    summary: 'Find an account by email, or page through all accounts',
    description:
      'With `email`: the account with that address (any letter case), or an empty list. Without: oldest first, `limit` per page, `next_cursor` to go on.',
    query: ListAccountsQuery.extend({
      email: describe(listShape.email, 'An account’s email address (compared in lower case).'),
      limit: describe(listShape.limit, 'Page size, 1 to 500 (default 50).'),
      cursor: describe(listShape.cursor, 'The `next_cursor` of the previous page.'),
    }),
    responses: {
      200: json('The accounts.', AccountListResponse),
      400: error('An invalid query parameter (the reason names it), a cursor this API did not return, or `cursor` with `email`.'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { query }) => {
      if (query.email !== undefined) {
        if (query.cursor !== undefined) throw badRequest('cursor: not allowed with email (an email names one account)');
        const account = await findAccountByEmail(sql, query.email);
        ctx.body = { accounts: account ? [presentAccountSummary(account)] : [], next_cursor: null };
        return;
      }
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await listAccounts(sql, { limit: query.limit, after });
      const last = rows.at(-1);
      ctx.body = {
        accounts: rows.map(presentAccountSummary),
        next_cursor: rows.length === query.limit && last ? encodeCursor({ createdAt: last.cursor_time, id: last.id }) : null,
      };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/admin/accounts/:id/tokens',
    auth: 'operatorToken',
    operationId: 'issueAdminToken',
    tags: ['Operator'],
    summary: 'Issue a new admin token for an account (a lost one cannot be shown again)',
    description:
      'With `revokeOthers`, the account’s other owner tokens stop working in the same transaction; team members’ tokens are kept.',
    params: z.object({ id: describe(z.uuid({ error: 'account not found' }), 'Account id.') }),
    body: optionalBody(
      body(
        withFieldDocs(IssueAdminTokenBody, { revokeOthers: 'Revoke every other owner token. Default false.' }),
        'IssueAdminTokenRequest',
      ),
      'Optional. Field names are given in camelCase; the snake_case spelling (`revoke_others`) is accepted too.',
    ),
    responses: {
      200: json('The account and its new token.', IssuedAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such account.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params, body }) => {
      const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
      const revokeOthers = body?.revokeOthers ?? false;
      const result = await issueAdminToken(sql, params.id, { tokenHash: hashSecret(adminToken), revokeOthers });
      if (!result) throw notFound('account not found');
      ctx.body = { ...presentAccount(result.account, adminToken), revoked_tokens: result.revoked };
    },
  }),
];
