import { Router } from '@koa/router';
import { uuidv7 } from 'uuidv7';
import { toTrackedEvent, type IngestEvent } from '../../core/event.js';
import { SinkUnavailableError } from '../../workers/ingest/event-sink.js';
import { apiKeyAuth, keyProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest } from '../errors.js';
import { batchResults, type Checked } from './batch-results.js';
import { clockSkewMs, eventTime } from './event-time.js';
import { BatchEventsBody, sentAt as sentAtSchema, TrackEventBody, TrackRequestBody } from './events.schema.js';
import type { AppState, RequestContext } from '../state.js';
import { mayHoldUnstorable } from '../middleware/storable-input.js';
import { describeIssue, findUnstorableString, parseBody } from '../validation.js';

/** Seconds a client should wait before retrying when the queue is unreachable. */
const RETRY_AFTER_SECONDS = 5;

type Received = { ms: number; iso: string };

function toIngestEvent(projectId: string, body: TrackEventBody, createdAt: string, receivedAt: string): IngestEvent {
  return {
    project_id: projectId,
    event_id: body.eventId ?? uuidv7(),
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
function trackSentAt(ctx: RequestContext, body: TrackRequestBody): string | undefined {
  if (body.sentAt !== undefined) return body.sentAt;
  const header = ctx.req.headers['x-sent-at'];
  if (header === undefined) return undefined;
  const parsed = sentAtSchema.safeParse(header);
  if (!parsed.success) throw badRequest(`X-Sent-At: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

/**
 * SPEC 4.9 and the batch variant. The API stores nothing itself: it hands the events to the
 * sink and answers once they are durable. Any event name is accepted on every tier.
 */
export function eventsRouter({ projectKeys, eventSink, logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  // Ingestion has its own budget per key; a batch counts as one request.
  const auth = apiKeyAuth(projectKeys, { budget: 'ingest' });

  async function submit(events: IngestEvent[]): Promise<IngestEvent[]> {
    try {
      return await eventSink.submit(events);
    } catch (error) {
      logger.warn({ err: error, events: events.length }, 'events not accepted');
      const reason =
        error instanceof SinkUnavailableError ? 'event ingestion is unavailable, retry later' : 'event storage is unavailable, retry later';
      throw new AppError(503, reason, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
  }

  router.post('/events/track', auth, async (ctx) => {
    const body = parseBody(TrackRequestBody, ctx.request.body);
    const received = receivedNow();
    const time = eventTime(body.timestamp, received, clockSkewMs(trackSentAt(ctx, body), received.ms));
    if (!time.ok) throw badRequest(time.reason);
    const [stored] = await submit([toIngestEvent(keyProject(ctx).id, body, time.createdAt, received.iso)]);
    ctx.body = toTrackedEvent(stored as IngestEvent);
  });

  // Each event is validated on its own: a bad one is answered `rejected` and never retried by
  // the SDK, while the rest of the batch is stored (issue 22).
  router.post('/events/batch', auth, async (ctx) => {
    const envelope = parseBody(BatchEventsBody, ctx.request.body);
    const projectId = keyProject(ctx).id;
    const received = receivedNow();
    const skewMs = clockSkewMs(envelope.sentAt, received.ms);
    // Strings no store can hold (app.ts leaves them to this route), looked for only when the text has an escape.
    const unstorableCheck = mayHoldUnstorable(ctx.request.rawBody);
    const checked = envelope.events.map((raw): Checked => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { reason: 'event: must be a JSON object' };
      const unstorable = unstorableCheck ? findUnstorableString(raw, 'event') : null;
      if (unstorable) return { reason: unstorable };
      const parsed = TrackEventBody.safeParse(raw);
      if (!parsed.success) return { reason: describeIssue(parsed.error, raw) };
      const time = eventTime(parsed.data.timestamp, received, skewMs);
      if (!time.ok) return { reason: time.reason };
      return { event: toIngestEvent(projectId, parsed.data, time.createdAt, received.iso) };
    });
    const valid = checked.flatMap((item) => ('event' in item ? [item.event] : []));
    const stored = valid.length === 0 ? [] : await submit(valid);
    ctx.body = batchResults(checked, stored);
  });

  return router;
}
