import { Router } from '@koa/router';
import {
  findAccountByEmail,
  issueAdminToken,
  listAccounts,
  type AccountCursor,
  type AccountSummary,
} from '../../oltp/admin-accounts.repo.js';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { IssueAdminTokenBody, ListAccountsQuery } from './admin-accounts.schema.js';
import { operatorAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound } from '../errors.js';
import { presentAccount } from './operator.presenter.js';
import type { AppState } from '../state.js';
import { isUuid, parseBody, parseQuery } from '../validation.js';

/** An account in the operator's listing: the account record and what hangs on it. */
export function presentAccountSummary(row: AccountSummary) {
  return { ...presentAccount(row), project_count: row.project_count, admin_token_count: row.admin_token_count };
}

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

/**
 * Operator tools for accounts (issue 16): find an account by email or page through all of them,
 * and issue a new owner admin token (a lost one cannot be shown again: only its hash is stored),
 * optionally revoking the others.
 */
export function adminAccountsRouter({ sql, operatorToken }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = operatorAuth(operatorToken);

  router.get('/admin/accounts', auth, async (ctx) => {
    const query = parseQuery(ListAccountsQuery, ctx.query);
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
  });

  router.post('/admin/accounts/:id/tokens', auth, async (ctx) => {
    const body = parseBody(IssueAdminTokenBody, ctx.request.body ?? {});
    const id = ctx.params.id ?? '';
    const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
    const result = isUuid(id)
      ? await issueAdminToken(sql, id, { tokenHash: hashSecret(adminToken), revokeOthers: body.revokeOthers })
      : null;
    if (!result) throw notFound('account not found');
    ctx.body = { ...presentAccount(result.account, adminToken), revoked_tokens: result.revoked };
  });

  return router;
}
