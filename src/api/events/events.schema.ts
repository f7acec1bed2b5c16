import { z } from 'zod';
import { bodySchema, camelKeys, userIdSchema } from '../validation.js';

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

/** Whether `value` nests deeper than `limit` levels; iterative, and stops at the first too deep. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.depth > limit) return true;
    for (const child of Object.values(item.value)) stack.push({ value: child, depth: item.depth + 1 });
  }
  return false;
}

const properties = z
  .record(z.string(), z.unknown(), { error: 'must be an object of key-value pairs' })
  .nullable()
  .optional()
  .superRefine((value, ctx) => {
    if (value == null) return;
    // Depth first: the size check serializes the value, which a deep enough one cannot survive.
    if (nestsDeeperThan(value, MAX_PROPERTIES_DEPTH)) {
      ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_PROPERTIES_DEPTH} levels` });
    } else if (Buffer.byteLength(JSON.stringify(value)) > MAX_PROPERTIES_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_PROPERTIES_BYTES} bytes as JSON` });
    }
  });

const timestamp = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z' })
  .refine((value) => Date.parse(value) <= Date.now() + MAX_FUTURE_MS, { error: 'must be at most 1 hour in the future' })
  .refine((value) => Date.parse(value) >= Date.now() - MAX_PAST_MS, { error: 'must be at most 2 years in the past' })
  .optional();

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

/** POST /events/track body (SPEC 4.9) plus the optional timestamp and eventId of DESIGN 3. */
export const TrackEventBody = bodySchema(eventFields);
export type TrackEventBody = z.infer<typeof TrackEventBody>;

/** POST /events/batch body: 1 to 1000 events, each like a track body, validated all or nothing. */
export const BatchEventsBody = bodySchema({
  events: z
    .array(z.preprocess(camelKeys, z.object(eventFields, { error: 'must be an object' })), { error: 'must be an array' })
    .min(1, 'must hold at least 1 event')
    .max(MAX_BATCH_EVENTS, `must hold at most ${MAX_BATCH_EVENTS} events`),
});
export type BatchEventsBody = z.infer<typeof BatchEventsBody>;
