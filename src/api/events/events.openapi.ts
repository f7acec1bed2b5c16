import { ErrorBody } from '../errors.responses.js';
import { PREDEFINED_EVENTS } from '../metrics/measures.js';
import { API_KEY, body, defaultError, error, json, withFieldDocs, type Route } from '../openapi/building-blocks.js';
import { z } from 'zod';
import { BATCH_BODY_LIMIT_BYTES, BODY_LIMIT_BYTES } from '../middleware/json-body.js';
import { MAX_BATCH_EVENTS, MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH, sentAt, TrackEventBody, TrackRequestBody } from './events.schema.js';
import { BatchEventsResponse, TrackedEventResponse } from './events.responses.js';

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

const requestBodies = () => {
  const batchEvent = withFieldDocs(TrackEventBody, eventFieldDocs).meta({ id: 'BatchEvent' });
  return {
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
        sentAt: sentAt.meta({ description: SENT_AT }),
      }),
      'TrackEventBatchRequest',
      'Each event takes the fields of /events/track, in either casing.',
    ),
  };
};

/** Analytics event ingestion (SPEC 4.9). */
export function registerEventPaths(route: Route) {
  const requests = requestBodies();

  const unavailable = {
    description:
      'The queue (Redis) or, without Redis, ClickHouse cannot take the events: nothing of the request was acknowledged; retry. Server-wide error body.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } } },
    content: { 'application/json': { schema: ErrorBody } },
  };
  const ingestion =
    'Any event name is accepted on every tier. The answer comes once the event is durable. An `eventId` already accepted for the project is not stored again: the answer is the first request’s event.';

  route({
    method: 'post',
    path: '/events/track',
    operationId: 'trackEvent',
    tags: ['Events'],
    summary: 'Track an analytics event',
    description: ingestion,
    security: API_KEY,
    request: {
      body: requests.trackEvent,
      headers: z.object({
        'X-Sent-At': sentAt.meta({ description: 'The body field `sentAt` as a header (for clients that build the body once).' }),
        'Content-Encoding': contentEncoding,
      }),
    },
    responses: {
      200: json('The stored event.', TrackedEventResponse),
      400: error('Validation failed; the reason names the field. Also a body that is not valid gzip data under `Content-Encoding: gzip`.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended, or its `allowed_origins` do not list the request’s `Origin`.'),
      413: error(`The body is larger than ${BODY_LIMIT_BYTES} bytes (1 MiB), decompressed; the reason states the limit.`),
      415: error('An unknown `Content-Encoding` (gzip is the one SDKs send; deflate and br are read too).'),
      503: unavailable,
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/events/batch',
    operationId: 'trackEventBatch',
    tags: ['Events'],
    summary: 'Track a batch of events',
    description: `1 to ${MAX_BATCH_EVENTS} events, body up to 5 MiB. Each event is validated on its own: the answer lists, in the order sent, what became of each (\`accepted\`, \`duplicate\` for an \`eventId\` already accepted, or \`rejected\` with the reason, e.g. \`userId: is required\`), and a batch whose events are all rejected is still a 200. A rejected event must not be sent again. Only an invalid envelope (not an object, \`events\` missing, not an array, empty or too long, a bad \`sentAt\`) is a 400, and then nothing is stored. ${ingestion}`,
    security: API_KEY,
    request: { body: requests.trackEventBatch, headers: z.object({ 'Content-Encoding': contentEncoding }) },
    responses: {
      200: json('What became of each event.', BatchEventsResponse),
      400: error('The envelope is invalid (the reason names the field), or the body is not valid gzip data: nothing is stored.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended, or its `allowed_origins` do not list the request’s `Origin`.'),
      413: error(
        `The body is larger than ${BATCH_BODY_LIMIT_BYTES} bytes (5 MiB), decompressed; the reason states the limit. Send smaller batches (our SDK halves the batch).`,
      ),
      415: error('An unknown `Content-Encoding` (gzip is the one SDKs send; deflate and br are read too).'),
      503: unavailable,
      default: defaultError,
    },
  });
}
