import { ErrorBody } from '../errors.responses.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { API_KEY, body, defaultError, error, json, withFieldDocs, type Route } from '../openapi/building-blocks.js';
import { BatchEventsBody, MAX_BATCH_EVENTS, MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH, TrackEventBody } from './events.schema.js';
import { BatchEventsResponse, TrackedEventResponse } from './events.responses.js';

const requestBodies = () => ({
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
});

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
    request: { body: requests.trackEvent },
    responses: {
      200: json('The stored event.', TrackedEventResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
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
    description: `1 to ${MAX_BATCH_EVENTS} events, body up to 5 MiB, validated all or nothing: one bad event is a 400 naming its index (\`events.3.userId: is required\`) and nothing is stored. ${ingestion}`,
    security: API_KEY,
    request: { body: requests.trackEventBatch },
    responses: {
      200: json('The stored events.', BatchEventsResponse),
      400: error('Validation failed; the reason names the field and the event’s index.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      413: error('The body is larger than 5 MiB.'),
      503: unavailable,
      default: defaultError,
    },
  });
}
