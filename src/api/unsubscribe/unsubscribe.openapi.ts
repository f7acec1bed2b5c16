import { z } from 'zod';
import { PUBLIC, defaultError, describe, error, type Route } from '../openapi/building-blocks.js';
import { UnsubscribeLinkResponse, UnsubscribeResponse } from './unsubscribe.responses.js';

/** The unsubscribe link of status-change emails (README "Notifications"). */
export function registerUnsubscribePaths(route: Route) {
  const unsubscribeToken = z.object({ token: describe(z.uuid(), 'The token of the link in the email.') });
  const unsubscribeNegotiation =
    ' No credentials: the token is the proof. A client that prefers `text/html` to JSON in `Accept` (a browser) gets a short HTML page, any other JSON.';
  route({
    method: 'get',
    path: '/unsubscribe/{token}',
    operationId: 'unsubscribeLink',
    tags: ['Notifications'],
    summary: 'What an unsubscribe link is for (the link in the email); changes nothing',
    description:
      'Read only, so that mail scanners and link prefetchers that open every link of a message unsubscribe nobody. Names the item and the address the link was sent to and whether that address still gets the item’s status-change emails; ' +
      'the HTML page has, while it does, a form with an Unsubscribe button that POSTs to this same URL.' +
      unsubscribeNegotiation,
    security: PUBLIC,
    request: { params: unsubscribeToken },
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
  });
  route({
    method: 'post',
    path: '/unsubscribe/{token}',
    operationId: 'unsubscribe',
    tags: ['Notifications'],
    summary: 'Unsubscribe from status-change emails (the page’s button, RFC 8058 one-click)',
    description:
      'Stops the status-change emails of one item to the address the link was sent to (as a voter or as the submitter). Idempotent. ' +
      'The target of the confirmation page’s form and of `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. The request body is not read: ' +
      'none, a form (`List-Unsubscribe=One-Click`, form-encoded or multipart) or anything else is accepted.' +
      unsubscribeNegotiation,
    security: PUBLIC,
    request: { params: unsubscribeToken },
    responses: {
      200: {
        description: 'Unsubscribed (also when it already was).',
        content: { 'application/json': { schema: UnsubscribeResponse }, 'text/html': { schema: z.string() } },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
  });
}
