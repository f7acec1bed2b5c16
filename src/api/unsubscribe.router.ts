import { Router } from '@koa/router';
import { unsubscribe } from '../oltp/notifications.repo.js';
import type { ApiDeps } from './deps.js';
import { notFound } from './errors.js';
import type { AppContext, AppState } from './state.js';
import { isUuid } from './validation.js';

/**
 * The unsubscribe link of status-change emails: no credentials, the token is the proof. GET is
 * the link a person clicks; POST is the one-click unsubscribe mail clients send (RFC 8058,
 * `List-Unsubscribe-Post`). Both are idempotent. A browser gets a small HTML page, anything else
 * JSON.
 */
export function unsubscribeRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  const handle = async (ctx: AppContext) => {
    const token = ctx.params.token ?? '';
    const result = isUuid(token) ? await unsubscribe(sql, token) : null;
    if (!result) throw notFound('unknown or expired unsubscribe link');
    const body = { unsubscribed: true as const, feedback_id: result.feedback_id };
    if (ctx.method === 'GET' && ctx.accepts('json', 'html') === 'html') {
      ctx.type = 'html';
      ctx.body =
        '<!doctype html><html><head><meta charset="utf-8"><title>Unsubscribed</title></head>' +
        '<body style="font-family: sans-serif"><p>You will no longer receive status updates about this item.</p></body></html>';
      return;
    }
    ctx.body = body;
  };
  router.get('/unsubscribe/:token', handle);
  router.post('/unsubscribe/:token', handle);
  return router;
}
