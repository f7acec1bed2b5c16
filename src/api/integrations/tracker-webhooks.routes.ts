import { parse as parseJsonSafely } from '@hapi/bourne';
import readRawBody from 'raw-body';
import { z } from 'zod';
import { apiTime, apiTimeOrNull } from '../../core/time.js';
import type { TrackerKind } from '../../core/trackers.js';
import { findTrackerIntegration, listInbound, recordInbound, trackerForCall } from '../../oltp/trackers.repo.js';
import { defineRoute, type RouteDeps } from '../define-route.js';
import { AppError, badRequest, notFound, unauthorized } from '../errors.js';
import { BODY_LIMIT_BYTES } from '../middleware/json-body.js';
import { defaultError, error, json } from '../shared/building-blocks.js';
import { timestamp } from '../shared/response-fields.js';
import type { RequestContext } from '../state.js';
import { isUuid } from '../validation.js';
import { ProjectIntegrationPath } from './integrations.schema.js';
import { REPLAY_WINDOW_MS, readGithubDelivery, readLinearDelivery, SIGNATURE_HEADERS, validSignature } from './tracker-webhooks.js';

/*
 * The trackers' webhooks (docs/integrations.md, "In: from the tracker to the item"). The
 * signature is checked first: without a valid one nothing else of the request is read or
 * recorded (401). A signed delivery is recorded (once: a redelivery's id is known) and answered at
 * once; the trackers' worker (src/workers/trackers/) applies it afterwards, so the answer never
 * waits for the change, its notifications or the tracker.
 */

const WebhookQuery = z.object({
  integration: z
    .string()
    .optional()
    .meta({ description: 'The integration, as its `webhook_url` names it. Unknown or missing: 401, as a bad signature.' }),
});

const WebhookReceived = z
  .object({
    received: z.literal(true),
    duplicate: z.boolean().meta({ description: 'True for a redelivery (its delivery id was recorded before): it changes nothing.' }),
  })
  .meta({ id: 'TrackerWebhookReceived' });

const InboundWebhook = z
  .object({
    id: z.string(),
    delivery_id: z.string().meta({ description: 'GitHub’s `X-GitHub-Delivery`; Linear’s `webhookId:webhookTimestamp`.' }),
    received_at: timestamp,
    processed_at: timestamp.nullable().meta({ description: 'Null while it waits for the trackers’ worker.' }),
    outcome: z.enum(['status_changed', 'unchanged', 'echo', 'unmapped', 'unlinked', 'ignored']).nullable().meta({
      description:
        '`status_changed`: the item took the status; `unchanged`: it has it already; `echo`: the issue’s state was known (our own change coming back, or a change seen before); `unmapped`: the state maps to no status; `unlinked`: no item is linked to the issue; `ignored`: not a state change (a ping, another event), or the integration is disabled or the plan is Free.',
    }),
    detail: z.string().nullable(),
  })
  .meta({ id: 'TrackerWebhookDelivery' });

const NOT_SIGNED = 'signature: missing or not valid for this integration’s webhook secret';

async function receive(ctx: RequestContext, deps: RouteDeps, kind: TrackerKind, integrationId: string | undefined) {
  const header = ctx.get(SIGNATURE_HEADERS[kind]);
  if (!header || !integrationId || !isUuid(integrationId)) throw unauthorized(NOT_SIGNED);
  const tracker = await trackerForCall(deps.sql, null, integrationId);
  if (!tracker || tracker.kind !== kind) throw unauthorized(NOT_SIGNED);
  let raw: Buffer;
  try {
    raw = await readRawBody(ctx.req, { limit: BODY_LIMIT_BYTES });
  } catch (failure) {
    if ((failure as { status?: number }).status === 413) throw new AppError(413, `body: too large: the limit is ${BODY_LIMIT_BYTES} bytes`);
    throw badRequest('body: could not be read');
  }
  if (!validSignature(kind, deps.secretBox.open(tracker.webhook_secret_sealed), raw, header)) throw unauthorized(NOT_SIGNED);

  const payload = parsePayload(ctx, raw);
  const read =
    kind === 'github'
      ? readGithubDelivery(
          { delivery: ctx.get('x-github-delivery') || undefined, event: ctx.get('x-github-event') || undefined },
          payload,
          tracker.settings.target,
        )
      : readLinearDelivery(payload);
  if (read.kind !== 'delivery') throw badRequest(read.reason);
  const { duplicate } = await recordInbound(deps.sql, tracker.id, read.deliveryId, read.event);
  ctx.body = { received: true as const, duplicate };
}

/** The signed body as JSON: GitHub may also be set to send it form-encoded, as `payload=<json>`. */
function parsePayload(ctx: RequestContext, raw: Buffer): unknown {
  const text = raw.toString('utf8');
  const json = ctx.is('application/x-www-form-urlencoded') ? (new URLSearchParams(text).get('payload') ?? '') : text;
  try {
    return parseJsonSafely(json, { protoAction: 'remove' });
  } catch {
    throw badRequest('body: invalid JSON');
  }
}

const responses = {
  200: json('Recorded (or a redelivery, recognised); applied in the background.', WebhookReceived),
  400: error(
    `Signed, but not a delivery: invalid JSON, no delivery id, or older than ${REPLAY_WINDOW_MS / 60_000} minutes (refused as a replay).`,
  ),
  401: error(
    'No signature, a signature that does not match the integration’s webhook secret, or an unknown integration. Nothing is recorded.',
  ),
  default: defaultError,
};

export const trackerWebhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/integrations/:integrationId/webhooks',
    auth: 'projectAdmin',
    operationId: 'listTrackerWebhooks',
    tags: ['Integrations'],
    summary: 'A tracker integration’s last 50 webhooks, and what each changed',
    description:
      'Newest first: when each arrived, when it was applied, and its outcome (why a close in the tracker changed an item, or did not). Processed webhooks are kept 30 days.',
    params: ProjectIntegrationPath,
    responses: {
      200: json('The webhooks.', z.array(InboundWebhook)),
      404: error('No such project, or no tracker integration of that id in it.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const tracker = await findTrackerIntegration(sql, project.id, params.integrationId);
      if (!tracker) throw notFound('integration not found');
      const rows = await listInbound(sql, tracker.id, 50);
      ctx.body = rows.map((row) => ({
        id: String(row.id),
        delivery_id: row.delivery_id,
        received_at: apiTime(row.received_at),
        processed_at: apiTimeOrNull(row.processed_at),
        outcome: row.outcome as z.infer<typeof InboundWebhook>['outcome'],
        detail: row.detail,
      }));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/integrations/github/webhook',
    auth: 'public',
    operationId: 'receiveGithubWebhook',
    tags: ['Integrations'],
    summary: 'GitHub’s webhook of a github integration (paste its webhook_url into the repository’s settings)',
    description:
      'Signed with `X-Hub-Signature-256` (HMAC-SHA256 of the body with the integration’s webhook secret), checked before anything else. Deduplicated by `X-GitHub-Delivery`. ' +
      'The `issues` event’s `closed` and `reopened` actions change a linked item’s status through the status map’s `in`; every other event (a `ping` too) is recorded and ignored. The body is GitHub’s (JSON, or form-encoded `payload`).',
    query: WebhookQuery,
    responses,
    handler: (ctx, deps, { query }) => receive(ctx, deps, 'github', query.integration),
  }),
  defineRoute({
    method: 'post',
    path: '/integrations/linear/webhook',
    auth: 'public',
    operationId: 'receiveLinearWebhook',
    tags: ['Integrations'],
    summary: 'Linear’s webhook of a linear integration (paste its webhook_url into Linear’s API settings)',
    description:
      'Signed with `Linear-Signature` (hex HMAC-SHA256 of the body with the webhook’s signing secret, which is the integration’s `webhook_secret`), checked before anything else. Deduplicated by `webhookId` with `webhookTimestamp`. ' +
      '`Issue` `update` deliveries with `updatedFrom.stateId` change a linked item’s status through the status map’s `in`; every other delivery is recorded and ignored.',
    query: WebhookQuery,
    responses,
    handler: (ctx, deps, { query }) => receive(ctx, deps, 'linear', query.integration),
  }),
];
