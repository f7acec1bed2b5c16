import { z } from 'zod';
import { type IngestEvent, toTrackedEvent } from '../../core/event.js';
import { SinkUnavailableError } from '../../ingest/event-sink.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { keyProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest, forbidden } from '../errors.js';
import { BATCH_BODY_LIMIT_BYTES, BODY_LIMIT_BYTES } from '../middleware/json-body.js';
import { mayHoldUnstorable } from '../middleware/storable-input.js';
import { ANONYMOUS_USER_ID } from '../shared/anonymous-alias.js';
import { body, defaultError, describe, error, json, withFieldDocs } from '../shared/building-blocks.js';
import { ErrorBody } from '../shared/errors.responses.js';
import type { RequestContext } from '../state.js';
import { describeIssue, findUnstorableString, parseBody, parseQuery } from '../validation.js';
import { batchResults, type Checked, leanBatchResultsJson } from './batch-results.js';
import { type CheckedEvent, checkBatchEnvelope, checkEvent, checkTrackBody } from './event-check.js';
import { newEventId } from './event-id.js';
import { clockSkewMs, eventTime } from './event-time.js';
import { BatchEventsResponse, TrackAnswer } from './events.responses.js';
import {
  BatchEventsBody,
  BatchEventsQuery,
  MAX_BATCH_EVENTS,
  MAX_PROPERTIES_BYTES,
  MAX_PROPERTIES_DEPTH,
  sentAt as sentAtSchema,
  TrackEventBody,
  TrackRequestBody,
} from './events.schema.js';

const NOT_AN_OBJECT = { reason: 'event: must be a JSON object' } as const;

/** Seconds a client should wait before retrying when the queue is unreachable. */
const RETRY_AFTER_SECONDS = 5;

type Received = { ms: number; iso: string };

function toIngestEvent(projectId: string, body: CheckedEvent, createdAt: string, receivedAt: string): IngestEvent {
  return {
    project_id: projectId,
    event_id: body.eventId ?? newEventId(),
    event_name: body.eventName,
    user_id: body.userId,
    properties: body.properties ?? null,
    created_at: createdAt,
    received_at: receivedAt,
    id_from_client: body.eventId !== undefined,
  };
}

let nowMs = Number.NaN;
let now: Received = { ms: nowMs, iso: '' };
/**
 * The time now, with its ISO string. Formatting a Date cost about 0.8 µs, once per request; under
 * load many requests arrive within the same millisecond and share one.
 */
function receivedNow(): Received {
  const ms = Date.now();
  if (ms !== nowMs) {
    nowMs = ms;
    now = { ms, iso: new Date(ms).toISOString() };
  }
  return now;
}

/** The track request's `sentAt`: the body field, else the X-Sent-At header (docs/ingestion.md). */
function trackSentAt(ctx: RequestContext, body: { sentAt?: string | undefined }): string | undefined {
  if (body.sentAt !== undefined) return body.sentAt;
  const header = ctx.req.headers['x-sent-at'];
  if (header === undefined) return undefined;
  const parsed = sentAtSchema.safeParse(header);
  if (!parsed.success) throw badRequest(`X-Sent-At: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

const contentEncoding = z
  .enum(['gzip', 'deflate', 'br', 'identity'])
  .optional()
  .meta({ description: 'gzip: the body is compressed. Its limit applies to the decompressed size.' });

const SENT_AT =
  'When the client sent this request, by the same clock as the events’ `timestamp`s (ISO 8601 with a time zone). ' +
  'With it, each event’s stored time is `timestamp + (received − sentAt)`, which undoes a wrong device clock, clamped to 2 years back and 1 hour ahead; ' +
  'without it, a `timestamp` outside that window is refused. Events without `timestamp` keep the receive time.';

const eventFieldDocs = {
  eventName: `Any name is accepted on every tier; ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} are the predefined ones (readable in metrics on every plan).`,
  properties: `Free key-value pairs: a JSON object of at most ${MAX_PROPERTIES_BYTES / 1024} KiB, nested at most ${MAX_PROPERTIES_DEPTH} levels.`,
  timestamp:
    'When the event happened: ISO 8601 with a time zone. Without `sentAt`: at most 1 hour ahead and 2 years back (offline SDKs, imports), taken as sent. Default: when the server received it.',
  eventId:
    'A client-chosen UUID (our SDK sends a UUIDv7). An eventId already accepted for the project is not stored again; the answer is the first request’s event. Default: a server-assigned UUIDv7.',
};

const batchEvent = withFieldDocs(TrackEventBody, eventFieldDocs).meta({ id: 'BatchEvent' });
const requests = {
  trackEvent: body(
    withFieldDocs(TrackRequestBody, {
      ...eventFieldDocs,
      sentAt: `${SENT_AT} The \`X-Sent-At\` header does the same; the body field wins when both are sent.`,
    }),
    'TrackEventRequest',
  ),
  // Documents the envelope with the event's fields; the route validates the envelope first and
  // then each event on its own (events.schema.ts), which one schema cannot say.
  trackEventBatch: body(
    z.object({
      events: z
        .array(batchEvent)
        .min(1)
        .max(MAX_BATCH_EVENTS)
        .meta({ description: `1 to ${MAX_BATCH_EVENTS} events, each with the fields of /events/track, validated one by one.` }),
      sentAt: sentAtSchema.meta({ description: SENT_AT }),
    }),
    'TrackEventBatchRequest',
    'Each event takes the fields of /events/track, in either casing.',
  ),
};

const encodingErrors = {
  415: error('An unknown `Content-Encoding` (gzip is the one SDKs send; deflate and br are read too).'),
};

const unavailable = {
  description:
    'The queue (Redis) or, without Redis, ClickHouse cannot take the events: nothing of the request was acknowledged; retry. Server-wide error body.',
  headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } } },
  content: { 'application/json': { schema: ErrorBody } },
};
const ingestion =
  'Any event name is accepted on every tier. The answer comes once the event is durable. An `eventId` already accepted for the project is not stored again: the answer is the first request’s event.';

/** Hands the events to the sink; a sink that cannot take them is a 503 with Retry-After. */
async function submit({ eventSink, logger }: ApiDeps, events: IngestEvent[]): Promise<IngestEvent[]> {
  try {
    return await eventSink.submit(events);
  } catch (error) {
    logger.warn({ err: error, events: events.length }, 'events not accepted');
    const reason =
      error instanceof SinkUnavailableError ? 'event ingestion is unavailable, retry later' : 'event storage is unavailable, retry later';
    throw new AppError(503, reason, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
  }
}

/**
 * What the publishable key (a web page's, public in its source) may track (docs/widget.md,
 * "Events tracked with the publishable key"): the predefined events of SPEC part 6, as the user
 * of X-User-Token or as an anon-… visitor. Anything else would let whoever reads the page fill the
 * project's metrics with made-up users and events. The secret key is not limited.
 */
function publishableKeyRefusal(ctx: RequestContext, eventName: string, userId: string): string | undefined {
  if (!ctx.state.publishableKey) return undefined;
  if (!(PREDEFINED_EVENTS as readonly string[]).includes(eventName)) {
    return `eventName: a publishable key tracks only the predefined events (${PREDEFINED_EVENTS.join(', ')})`;
  }
  const identity = ctx.state.identity;
  if (identity ? userId !== identity.userId : !ANONYMOUS_USER_ID.test(userId)) {
    return 'userId: a publishable key tracks as the user of X-User-Token, or as an anonymous visitor (anon-<random>)';
  }
  return undefined;
}

/**
 * SPEC 4.9 and the batch variant. The API stores nothing itself: it hands the events to the
 * sink and answers once they are durable. Any event name is accepted on every tier. Ingestion
 * has its own budget per key (`ingestKey`); a batch counts as one request. The app matches these
 * routes first (`hotPath`, app.ts).
 */
export const eventRoutes = [
  defineRoute({
    method: 'post',
    path: '/events/track',
    auth: 'ingestKey',
    hotPath: true,
    cors: true,
    operationId: 'trackEvent',
    tags: ['Events'],
    summary: 'Track an analytics event',
    description: ingestion,
    body: requests.trackEvent,
    headers: z.object({
      'X-Sent-At': sentAtSchema.meta({ description: 'The body field `sentAt` as a header (for clients that build the body once).' }),
      'Content-Encoding': contentEncoding,
    }),
    responses: {
      200: json('The stored event, with `success: true` (the origin’s Kotlin SDK decodes it).', TrackAnswer),
      400: error('Validation failed; the reason names the field. Also a body that is not valid gzip data under `Content-Encoding: gzip`.'),
      401: error('Missing or invalid API key.'),
      403: error(
        'The project is suspended, or its `allowed_origins` do not list the request’s `Origin`, or a publishable key tracks other than a predefined event as the token’s user or an `anon-…` visitor (docs/widget.md).',
      ),
      413: error(`The body is larger than ${BODY_LIMIT_BYTES} bytes (1 MiB), decompressed; the reason states the limit.`),
      ...encodingErrors,
      503: unavailable,
      default: defaultError,
    },
    handler: async (ctx, deps) => {
      // The compiled check takes the common body without copies; zod decides everything else.
      const body = checkTrackBody(ctx.request.body) ?? parseBody(TrackRequestBody, ctx.request.body);
      const received = receivedNow();
      const time = eventTime(body.timestamp, received, clockSkewMs(trackSentAt(ctx, body), received.ms));
      if (typeof time !== 'string') throw badRequest(time.reason);
      const refusal = publishableKeyRefusal(ctx, body.eventName, body.userId);
      if (refusal) throw forbidden(refusal);
      const [stored] = await submit(deps, [toIngestEvent(keyProject(ctx).id, body, time, received.iso)]);
      const answer: ReturnType<typeof toTrackedEvent> & { success?: true } = toTrackedEvent(stored as IngestEvent);
      answer.success = true;
      ctx.body = answer;
    },
  }),
  defineRoute({
    method: 'post',
    path: '/events/batch',
    auth: 'ingestKey',
    hotPath: true,
    cors: true,
    operationId: 'trackEventBatch',
    tags: ['Events'],
    summary: 'Track a batch of events',
    description: `1 to ${MAX_BATCH_EVENTS} events, body up to 5 MiB. Each event is validated on its own: the answer lists, in the order sent, what became of each (\`accepted\`, \`duplicate\` for an \`eventId\` already accepted, or \`rejected\` with the reason, e.g. \`userId: is required\`), and a batch whose events are all rejected is still a 200. A rejected event must not be sent again. Only an invalid envelope (not an object, \`events\` missing, not an array, empty or too long, a bad \`sentAt\`) is a 400, and then nothing is stored. ${ingestion}`,
    body: requests.trackEventBatch,
    query: z.object({
      echo: describe(
        BatchEventsQuery.shape.echo,
        '`true` (or `1`): each accepted or duplicate result carries the stored event whole (`event`, SPEC 2.7’s Tracked event) instead of its `id`. Default false: the lean answer, status and id per event.',
      ),
    }),
    headers: z.object({ 'Content-Encoding': contentEncoding }),
    responses: {
      200: json(
        'What became of each event: by default its status and the stored id (or the reason of a refusal); with `echo=true` the stored events whole.',
        BatchEventsResponse,
      ),
      400: error('The envelope is invalid (the reason names the field), or the body is not valid gzip data: nothing is stored.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended, or its `allowed_origins` do not list the request’s `Origin`.'),
      413: error(
        `The body is larger than ${BATCH_BODY_LIMIT_BYTES} bytes (5 MiB), decompressed; the reason states the limit. Send smaller batches (our SDK halves the batch).`,
      ),
      ...encodingErrors,
      503: unavailable,
      default: defaultError,
    },
    handler: async (ctx, deps) => {
      // The ingestion routes have no other parameter: most requests have no query string at all.
      const echo = ctx.querystring !== '' && parseQuery(BatchEventsQuery, ctx.query).echo === true;
      const envelope = checkBatchEnvelope(ctx.request.body) ?? parseBody(BatchEventsBody, ctx.request.body);
      const projectId = keyProject(ctx).id;
      const received = receivedNow();
      const skewMs = clockSkewMs(envelope.sentAt, received.ms);
      // Each event is validated on its own: a bad one is answered `rejected` and never retried by
      // the SDK, while the rest of the batch is stored (issue 22). Strings no store can hold (app.ts
      // leaves them to this route) are looked for only when the text has an escape.
      const unstorableCheck = mayHoldUnstorable(ctx.request.rawBody);
      // No object per event beyond the event stored: a refusal is its reason's object, and the
      // valid events are gathered in the same pass.
      const valid: IngestEvent[] = [];
      const checked = envelope.events.map((raw): Checked => {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return NOT_AN_OBJECT;
        const unstorable = unstorableCheck ? findUnstorableString(raw, 'event') : null;
        if (unstorable) return { reason: unstorable };
        let body: CheckedEvent | undefined = checkEvent(raw);
        if (body === undefined) {
          const parsed = TrackEventBody.safeParse(raw);
          if (!parsed.success) return { reason: describeIssue(parsed.error, raw) };
          body = parsed.data;
        }
        const refusal = publishableKeyRefusal(ctx, body.eventName, body.userId);
        if (refusal) return { reason: refusal };
        const time = eventTime(body.timestamp, received, skewMs);
        if (typeof time !== 'string') return time;
        const event = toIngestEvent(projectId, body, time, received.iso);
        valid.push(event);
        return event;
      });
      const stored = valid.length === 0 ? [] : await submit(deps, valid);
      if (echo) ctx.body = batchResults(checked, stored);
      else {
        ctx.type = 'application/json';
        ctx.body = leanBatchResultsJson(checked, stored);
      }
    },
  }),
];
