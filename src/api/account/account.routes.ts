import { Router } from '@koa/router';
import { adminAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { unauthorized } from '../errors.js';
import type { AppState } from '../state.js';
import { presentAccount } from './account.presenter.js';

/** The signed-in account and its plan (admin token), so the dashboard explains plan gates up front. */
export function accountRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/account', adminAuth(sql), async (ctx) => {
    const account = ctx.state.account;
    if (!account) throw unauthorized('missing admin bearer token');
    ctx.body = presentAccount(account, ctx.state.memberId ?? null);
  });

  return router;
}
