import { z } from 'zod';
import { anyValues } from '../shared/any-values.js';
import { bodySchema, camelKeys, queryBoolean, userIdSchema } from '../validation.js';

/** Serialized size cap of one event's properties: keeps rows (and queue jobs) bounded. */
export const MAX_PROPERTIES_BYTES = 32 * 1024;
/** Accepted clock skew into the future, and how far back offline SDKs and imports may go. */
export const MAX_FUTURE_MS = 60 * 60 * 1000;
export const MAX_PAST_MS = 2 * 366 * 24 * 60 * 60 * 1000;
export const MAX_BATCH_EVENTS = 1000;

/**
 * Nesting levels of one event's properties (the object itself is level 1). ClickHouse's JSON
 * column refuses a few thousand levels (the row would be dead-lettered), and serializing far
 * deeper ones overflows the stack; real properties nest a few levels.
 */
export const MAX_PROPERTIES_DEPTH = 64;

/**
 * One walk over a properties value: whether it nests deeper than `depthLimit` levels (stopping at
 * the first too deep), and an upper bound of its size as JSON in UTF-8 bytes (a string's UTF-16
 * unit takes at most 6 bytes, as a `\uXXXX` escape; a number at most 25). Iterative, so a deep
 * value cannot overflow the stack. The bound lets the usual small properties skip the exact size
 * check, which serialized them once more on every event (BENCHMARKS.md, "BullMQ request path").
 */
export function measure(value: unknown, depthLimit: number): { tooDeep: boolean; jsonBytesAtMost: number } {
  const values: unknown[] = [value];
  const depths: number[] = [1];
  let bytes = 0;
  while (values.length > 0) {
    const current = values.pop();
    const depth = depths.pop() as number;
    if (typeof current === 'string') bytes += 2 + 6 * current.length;
    else if (current === null || typeof current !== 'object') bytes += 25;
    else {
      if (depth > depthLimit) return { tooDeep: true, jsonBytesAtMost: Number.POSITIVE_INFINITY };
      bytes += 2;
      if (Array.isArray(current)) {
        for (const child of current) {
          bytes += 1;
          values.push(child);
          depths.push(depth + 1);
        }
      } else {
        for (const key in current) {
          if (!Object.hasOwn(current, key)) continue;
          bytes += 4 + 6 * key.length;
          values.push((current as Record<string, unknown>)[key]);
          depths.push(depth + 1);
        }
      }
    }
  }
  return { tooDeep: false, jsonBytesAtMost: bytes };
}

const properties = z
  .record(z.string(), z.unknown(), { error: 'must be an object of key-value pairs' })
  .meta(anyValues)
  .nullable()
  .optional()
  .superRefine((value, ctx) => {
    if (value == null) return;
    // Depth first: the size check serializes the value, which a deep enough one cannot survive.
    const { tooDeep, jsonBytesAtMost } = measure(value, MAX_PROPERTIES_DEPTH);
    if (tooDeep) {
      ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_PROPERTIES_DEPTH} levels` });
    } else if (jsonBytesAtMost > MAX_PROPERTIES_BYTES && Buffer.byteLength(JSON.stringify(value)) > MAX_PROPERTIES_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_PROPERTIES_BYTES} bytes as JSON` });
    }
  });

const isoDateTime = (example: string) =>
  z.iso.datetime({ offset: true, error: `must be an ISO 8601 date-time with a time zone, e.g. ${example}` });

/**
 * The event's own time as the client's clock says. Its bounds (MAX_FUTURE_MS, MAX_PAST_MS) are
 * checked once the clock skew is known, on the corrected time (event-time.ts): a device whose
 * clock runs 3 hours fast is no reason to refuse its events.
 */
const timestamp = isoDateTime('2026-01-31T12:00:00Z').optional();

/** When the client sent the request, by the same clock as the events' timestamps (clock skew). */
export const sentAt = isoDateTime('2026-01-31T12:00:05Z').optional();

const eventFields = {
  eventName: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 100 characters').max(100, 'must be 1 to 100 characters'),
  userId: userIdSchema,
  properties,
  timestamp,
  eventId: z
    .uuid({ error: 'must be a UUID' })
    .transform((id) => id.toLowerCase())
    .optional(),
};

/**
 * The origin's Kotlin SDK's event body, read additively (DESIGN 3, "Clients in the wild";
 * docs/clients.md): `name` for `eventName` (SPEC's `eventName`, or `event_name`, wins when both
 * are sent, and `name` is then ignored, as any unknown field was before), and `timestamp: null`,
 * which it sends for "now", as an absent timestamp. No body that was accepted is refused.
 */
export function originSdkEventBody(value: unknown): unknown {
  const body = camelKeys(value);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const fields = body as Record<string, unknown>;
  const renamed = fields.eventName === undefined && fields.name !== undefined;
  if (!renamed && fields.timestamp !== null) return body;
  const read: Record<string, unknown> = { ...fields };
  if (renamed) read.eventName = fields.name;
  if (read.timestamp === null) delete read.timestamp;
  return read;
}

const eventNameAliasField = {
  name: z.unknown().optional().meta({
    type: 'string',
    description:
      'The origin Kotlin SDK’s spelling of `eventName`: read as `eventName` when that field is absent (then it must meet the same rules), ignored when `eventName` is sent.',
  }),
};

/** An event body: either casing (camelKeys), and the origin Kotlin SDK's spellings (originSdkEventBody). */
const eventBodySchema = <Shape extends z.ZodRawShape>(shape: Shape) => z.preprocess(originSdkEventBody, z.object(shape));

/** POST /events/track body (SPEC 4.9) plus the optional timestamp and eventId of DESIGN 3. */
export const TrackEventBody = eventBodySchema({ ...eventFields, ...eventNameAliasField });
export type TrackEventBody = z.infer<typeof TrackEventBody>;

/** POST /events/track body (SPEC 4.9) plus `sentAt` (or the X-Sent-At header) for the clock skew. */
export const TrackRequestBody = eventBodySchema({ ...eventFields, ...eventNameAliasField, sentAt });
export type TrackRequestBody = z.infer<typeof TrackRequestBody>;

/**
 * POST /events/batch envelope: 1 to 1000 events and the optional `sentAt`. Only the envelope is
 * all or nothing (a 400); each event is validated on its own with TrackEventBody, and a bad one
 * is answered `rejected` while the others are stored.
 */
export const BatchEventsBody = bodySchema({
  events: z
    .array(z.unknown(), { error: 'must be an array' })
    .min(1, 'must hold at least 1 event')
    .max(MAX_BATCH_EVENTS, `must hold at most ${MAX_BATCH_EVENTS} events`),
  sentAt,
});
export type BatchEventsBody = z.infer<typeof BatchEventsBody>;

/**
 * POST /events/batch query: `echo=true` answers each stored event whole instead of its id (the
 * lean default, issue 31: the echo was the answer's largest cost and our SDK reads none of it).
 */
export const BatchEventsQuery = z.object({ echo: queryBoolean.optional() });
