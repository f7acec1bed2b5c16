import { z } from 'zod';
import { escapeHtml } from '../../core/html.js';
import { digestUnsubscribeUrl, unsubscribeUrl } from '../../core/unsubscribe-link.js';
import { type DigestLink, digestLink, unsubscribeDigest } from '../../oltp/digest.repo.js';
import { type UnsubscribeLink, unsubscribe, unsubscribeLink } from '../../oltp/notifications.repo.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { defaultError, describe, error } from '../shared/building-blocks.js';
import type { RequestContext } from '../state.js';
import {
  DigestUnsubscribeLinkResponse,
  DigestUnsubscribeResponse,
  UnsubscribeLinkResponse,
  UnsubscribeResponse,
} from './unsubscribe.responses.js';

const UNKNOWN_LINK = 'unknown or expired unsubscribe link';

const prefersHtml = (ctx: RequestContext) => ctx.accepts('json', 'html') === 'html';
const html = (ctx: RequestContext, page: string) => {
  ctx.type = 'html';
  ctx.body = page;
};

const unsubscribeToken = z.object({ token: describe(z.uuid({ error: UNKNOWN_LINK }), 'The token of the link in the email.') });
const unsubscribeNegotiation =
  ' No credentials: the token is the proof. A client that prefers `text/html` to JSON in `Accept` (a browser) gets a short HTML page, any other JSON.';

/**
 * The unsubscribe link of status-change emails (README "Notifications"): no credentials, the
 * token is the proof.
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
export const unsubscribeRoutes = [
  defineRoute({
    method: 'get',
    path: '/unsubscribe/:token',
    auth: 'public',
    operationId: 'unsubscribeLink',
    tags: ['Notifications'],
    summary: 'What an unsubscribe link is for (the link in the email); changes nothing',
    description:
      'Read only, so that mail scanners and link prefetchers that open every link of a message unsubscribe nobody. Names the item (for the link of a changelog email: the items) and the address the link was sent to and whether that address still gets their status-change emails; ' +
      'the HTML page has, while it does, a form with an Unsubscribe button that POSTs to this same URL.' +
      unsubscribeNegotiation,
    params: unsubscribeToken,
    responses: {
      200: {
        description: 'The link’s item and address. Not cached (`Cache-Control: no-store`).',
        content: {
          'application/json': { schema: UnsubscribeLinkResponse },
          'text/html': { schema: z.string().meta({ description: 'A confirmation page with a `<form method="post">` to this URL.' }) },
        },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, config }, { params: { token } }) => {
      const link = await unsubscribeLink(sql, token);
      if (!link) throw notFound(UNKNOWN_LINK);
      ctx.set('Cache-Control', 'no-store');
      if (prefersHtml(ctx)) return html(ctx, confirmPage(link, unsubscribeUrl(config.delivery.publicUrl, token)));
      ctx.body = link;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/unsubscribe/:token',
    auth: 'public',
    operationId: 'unsubscribe',
    tags: ['Notifications'],
    summary: 'Unsubscribe from status-change emails (the page’s button, RFC 8058 one-click)',
    description:
      'Stops the status-change emails of one item to the address the link was sent to (as a voter or as the submitter); the link of a changelog email stops those of every item of its entry. Idempotent. ' +
      'The target of the confirmation page’s form and of `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. The request body is not read: ' +
      'none, a form (`List-Unsubscribe=One-Click`, form-encoded or multipart) or anything else is accepted.' +
      unsubscribeNegotiation,
    params: unsubscribeToken,
    responses: {
      200: {
        description: 'Unsubscribed (also when it already was).',
        content: { 'application/json': { schema: UnsubscribeResponse }, 'text/html': { schema: z.string() } },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params: { token } }) => {
      const result = await unsubscribe(sql, token);
      if (!result) throw notFound(UNKNOWN_LINK);
      ctx.set('Cache-Control', 'no-store');
      if (prefersHtml(ctx)) {
        const link = await unsubscribeLink(sql, token);
        if (link) return html(ctx, page('Unsubscribed', `<p>${about(link)} will no longer be sent to ${escapeHtml(link.email)}.</p>`));
      }
      ctx.body = { unsubscribed: true as const, feedback_id: result.feedback_ids[0] as string, feedback_ids: result.feedback_ids };
    },
  }),
  // The weekly digest's link (docs/notifications.md "The weekly digest"): the same two steps.
  defineRoute({
    method: 'get',
    path: '/unsubscribe/digest/:token',
    auth: 'public',
    operationId: 'digestUnsubscribeLink',
    tags: ['Notifications'],
    summary: 'What a weekly digest’s unsubscribe link is for; changes nothing',
    description:
      'Read only, as the status emails’ link: names the project and the address, and whether it still gets the digest; the HTML page has, while it does, an Unsubscribe button that POSTs to this same URL.' +
      unsubscribeNegotiation,
    params: unsubscribeToken,
    responses: {
      200: {
        description: 'The link’s project and address. Not cached (`Cache-Control: no-store`).',
        content: { 'application/json': { schema: DigestUnsubscribeLinkResponse }, 'text/html': { schema: z.string() } },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, config }, { params: { token } }) => {
      const link = await digestLink(sql, token);
      if (!link) throw notFound(UNKNOWN_LINK);
      ctx.set('Cache-Control', 'no-store');
      if (prefersHtml(ctx)) return html(ctx, digestConfirmPage(link, digestUnsubscribeUrl(config.delivery.publicUrl, token)));
      ctx.body = link;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/unsubscribe/digest/:token',
    auth: 'public',
    operationId: 'digestUnsubscribe',
    tags: ['Notifications'],
    summary: 'Stop a project’s weekly digest to one address (the page’s button, RFC 8058 one-click)',
    description:
      'Turns the digest off for the recipient the email was sent to, as its setting would (PUT /projects/{id}/digest/settings). Idempotent; the body is not read.' +
      unsubscribeNegotiation,
    params: unsubscribeToken,
    responses: {
      200: {
        description: 'Unsubscribed (also when it already was).',
        content: { 'application/json': { schema: DigestUnsubscribeResponse }, 'text/html': { schema: z.string() } },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params: { token } }) => {
      const link = await unsubscribeDigest(sql, token);
      if (!link) throw notFound(UNKNOWN_LINK);
      ctx.set('Cache-Control', 'no-store');
      if (prefersHtml(ctx))
        return html(ctx, page('Unsubscribed', `<p>${digestAbout(link)} will no longer be sent to ${escapeHtml(link.email)}.</p>`));
      ctx.body = { unsubscribed: true as const, project_id: link.project_id };
    },
  }),
];

const digestAbout = (link: DigestLink) => `The weekly digest of “${escapeHtml(link.project_name)}”`;

function digestConfirmPage(link: DigestLink, action: string): string {
  if (!link.subscribed) return page('Unsubscribed', `<p>${digestAbout(link)} is no longer sent to ${escapeHtml(link.email)}.</p>`);
  return page(
    'Unsubscribe',
    `<p>${digestAbout(link)} is sent to ${escapeHtml(link.email)}.</p>` +
      `<form method="post" action="${escapeHtml(action)}">` +
      '<input type="hidden" name="List-Unsubscribe" value="One-Click">' +
      '<button type="submit">Unsubscribe</button></form>',
  );
}

/** "Status updates about “A”", or "… about “A”, “B” and “C”" for a changelog email's link. */
function about(link: UnsubscribeLink): string {
  const titles = link.items.map((item) => `“${escapeHtml(item.title)}”`);
  const list = titles.length > 1 ? `${titles.slice(0, -1).join(', ')} and ${titles.at(-1)}` : (titles[0] ?? '');
  return `Status updates about ${list}`;
}

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
