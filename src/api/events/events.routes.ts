import { uuidv7 } from 'uuidv7';
import { toTrackedEvent, type IngestEvent } from '../../core/event.js';
import { SinkUnavailableError } from '../../ingest/event-sink.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { keyProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import type { ApiDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { ErrorBody } from '../errors.responses.js';
import { body, defaultError, error, json, withFieldDocs } from '../openapi/building-blocks.js';
import { parseBody } from '../validation.js';
import { BatchEventsResponse, TrackedEventResponse } from './events.responses.js';
import { BatchEventsBody, MAX_BATCH_EVENTS, MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH, TrackEventBody } from './events.schema.js';

/** Seconds a client should wait before retrying when the queue is unreachable. */
const RETRY_AFTER_SECONDS = 5;

function toIngestEvent(projectId: string, body: TrackEventBody, receivedAt: string): IngestEvent {
  return {
    project_id: projectId,
    event_id: body.eventId ?? uuidv7(),
    event_name: body.eventName,
    user_id: body.userId,
    properties: body.properties ?? null,
    created_at: body.timestamp ? new Date(body.timestamp).toISOString() : receivedAt,
    received_at: receivedAt,
    id_from_client: body.eventId !== undefined,
  };
}

let isoMs = Number.NaN;
let isoText = '';
/**
 * The time now as an ISO string. Formatting a Date cost about 0.8 µs, once per request; under
 * load many requests arrive within the same millisecond and share one.
 */
function isoNow(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoText = new Date(now).toISOString();
  }
  return isoText;
}

const requests = {
  trackEvent: body(
    withFieldDocs(TrackEventBody, {
      eventName: `Any name is accepted on every tier; ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} are the predefined ones (readable in metrics on every plan).`,
      properties: `Free key-value pairs: a JSON object of at most ${MAX_PROPERTIES_BYTES / 1024} KiB, nested at most ${MAX_PROPERTIES_DEPTH} levels.`,
      timestamp:
        'When the event happened: ISO 8601 with a time zone, at most 1 hour ahead and 2 years back (offline SDKs, imports). Default: when the server received it.',
      eventId:
        'A client-chosen UUID. An eventId already accepted for the project is not stored again; the answer is the first request’s event. Default: a server-assigned UUIDv7.',
    }),
    'TrackEventRequest',
  ),
  trackEventBatch: body(
    withFieldDocs(BatchEventsBody, { events: `1 to ${MAX_BATCH_EVENTS} events, each with the fields of /events/track.` }),
    'TrackEventBatchRequest',
    'Each event takes the fields of /events/track, in either casing.',
  ),
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
 * SPEC 4.9 and the batch variant. The API stores nothing itself: it hands the events to the
 * sink and answers once they are durable. Any event name is accepted on every tier. Ingestion
 * has its own budget per key (`ingestKey`); a batch counts as one request. The app matches these
 * routes first (app.ts): they are the hot path.
 */
export const eventRoutes = [
  defineRoute({
    method: 'post',
    path: '/events/track',
    auth: 'ingestKey',
    operationId: 'trackEvent',
    tags: ['Events'],
    summary: 'Track an analytics event',
    description: ingestion,
    body: requests.trackEvent,
    responses: {
      200: json('The stored event.', TrackedEventResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      503: unavailable,
      default: defaultError,
    },
    handler: async (ctx, deps) => {
      const body = parseBody(TrackEventBody, ctx.request.body);
      const [stored] = await submit(deps, [toIngestEvent(keyProject(ctx).id, body, isoNow())]);
      ctx.body = toTrackedEvent(stored as IngestEvent);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/events/batch',
    auth: 'ingestKey',
    operationId: 'trackEventBatch',
    tags: ['Events'],
    summary: 'Track a batch of events',
    description: `1 to ${MAX_BATCH_EVENTS} events, body up to 5 MiB, validated all or nothing: one bad event is a 400 naming its index (\`events.3.userId: is required\`) and nothing is stored. ${ingestion}`,
    body: requests.trackEventBatch,
    responses: {
      200: json('The stored events.', BatchEventsResponse),
      400: error('Validation failed; the reason names the field and the event’s index.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      413: error('The body is larger than 5 MiB.'),
      503: unavailable,
      default: defaultError,
    },
    handler: async (ctx, deps) => {
      const body = parseBody(BatchEventsBody, ctx.request.body);
      const projectId = keyProject(ctx).id;
      const receivedAt = isoNow();
      const stored = await submit(
        deps,
        body.events.map((event) => toIngestEvent(projectId, event, receivedAt)),
      );
      ctx.body = { accepted: stored.length, events: stored.map(toTrackedEvent) };
    },
  }),
];
