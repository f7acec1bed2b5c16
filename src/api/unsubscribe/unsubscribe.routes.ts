import { Router } from '@koa/router';
import { escapeHtml } from '../../core/html.js';
import { unsubscribeUrl } from '../../core/unsubscribe-link.js';
import { unsubscribe, unsubscribeLink, type UnsubscribeLink } from '../../oltp/notifications.repo.js';
import type { ApiDeps } from '../deps.js';
import { notFound } from '../errors.js';
import type { RequestContext, AppState } from '../state.js';
import { isUuid } from '../validation.js';

const UNKNOWN_LINK = 'unknown or expired unsubscribe link';

/**
 * The unsubscribe link of status-change emails: no credentials, the token is the proof.
 *
 * GET is the link in the email and changes nothing: mail scanners and link prefetchers (Outlook
 * Safe Links, corporate gateways) open every link of a message, so a GET that unsubscribed would
 * unsubscribe recipients who never clicked. It shows what the link is for and a form that POSTs
 * to the same URL. POST unsubscribes: the form's button, and the one-click unsubscribe mail
 * clients send (RFC 8058, `List-Unsubscribe-Post`). POST reads no body (the app's parser skips
 * these paths, see app.ts), so a form or one-click body of any content type is accepted.
 *
 * Both answer HTML when the client prefers text/html to JSON (browsers do), JSON otherwise.
 */
export function unsubscribeRouter({ sql, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const tokenOf = (ctx: RequestContext) => {
    const token = ctx.params.token ?? '';
    return isUuid(token) ? token : null;
  };
  const prefersHtml = (ctx: RequestContext) => ctx.accepts('json', 'html') === 'html';
  const html = (ctx: RequestContext, page: string) => {
    ctx.type = 'html';
    ctx.body = page;
  };

  router.get('/unsubscribe/:token', async (ctx) => {
    const token = tokenOf(ctx);
    const link = token ? await unsubscribeLink(sql, token) : null;
    if (!token || !link) throw notFound(UNKNOWN_LINK);
    ctx.set('Cache-Control', 'no-store');
    if (prefersHtml(ctx)) return html(ctx, confirmPage(link, unsubscribeUrl(config.delivery.publicUrl, token)));
    ctx.body = link;
  });

  router.post('/unsubscribe/:token', async (ctx) => {
    const token = tokenOf(ctx);
    const result = token ? await unsubscribe(sql, token) : null;
    if (!token || !result) throw notFound(UNKNOWN_LINK);
    ctx.set('Cache-Control', 'no-store');
    if (prefersHtml(ctx)) {
      const link = await unsubscribeLink(sql, token);
      if (link) return html(ctx, page('Unsubscribed', `<p>${about(link)} will no longer be sent to ${escapeHtml(link.email)}.</p>`));
    }
    ctx.body = { unsubscribed: true as const, feedback_id: result.feedback_id };
  });
  return router;
}

const about = (link: UnsubscribeLink) => `Status updates about “${escapeHtml(link.title)}”`;

/** The page of the GET: what the link is for and, while the address is subscribed, the button. */
function confirmPage(link: UnsubscribeLink, action: string): string {
  if (!link.subscribed) return page('Unsubscribed', `<p>${about(link)} are no longer sent to ${escapeHtml(link.email)}.</p>`);
  return page(
    'Unsubscribe',
    `<p>${about(link)} are sent to ${escapeHtml(link.email)}.</p>` +
      `<form method="post" action="${escapeHtml(action)}">` +
      // The body RFC 8058 one-click senders post; the server ignores it either way.
      '<input type="hidden" name="List-Unsubscribe" value="One-Click">' +
      '<button type="submit">Unsubscribe</button></form>',
  );
}

function page(title: string, body: string): string {
  return (
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family: sans-serif; line-height: 1.4">${body}</body></html>`
  );
}
