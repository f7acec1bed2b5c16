import { z } from 'zod';
import {
  BatchEventsBody,
  MAX_BATCH_EVENTS,
  MAX_PROPERTIES_BYTES,
  MAX_PROPERTIES_DEPTH,
  measure,
  TrackEventBody,
  TrackRequestBody,
} from './events.schema.js';

/**
 * The ingestion routes' validation without zod's parse-and-copy (issue 31): a check compiled at
 * start-up from the same zod schemas (events.schema.ts, still the single source of the OpenAPI
 * document and of every refusal), which takes the common body in one pass and hands back the
 * request's own objects, no copies.
 *
 * It only ever accepts: for an input it cannot vouch for (any refusal, a snake_case key, the
 * `name` alias, anything unusual) it answers `undefined` and the route asks zod, which accepts or
 * refuses with its own reason. So the routes accept and refuse exactly what zod does as long as
 * what this check accepts, zod accepts with the same data: test/api/event-check.test.ts holds it
 * to that over the fuzz corpus and generated cases.
 */

/** The limits and patterns of a string field, read from its zod schema. */
type StringRule = { min: number; max: number };
type PatternRule = { pattern: RegExp };

const objectOf = (schema: z.ZodType): z.ZodObject => {
  const object = schema instanceof z.ZodPipe ? schema.out : schema;
  if (!(object instanceof z.ZodObject)) throw new Error('event-check: not an object schema');
  return object;
};

function stringRule(schema: z.ZodType | undefined, field: string): StringRule {
  if (!(schema instanceof z.ZodString) || schema.minLength === null || schema.maxLength === null) {
    throw new Error(`event-check: ${field} is not a bounded string schema; teach the compiled check its new form`);
  }
  return { min: schema.minLength, max: schema.maxLength };
}

/** The pattern of an optional string format (ISO date-time, UUID), through a transform if any. */
function patternRule(schema: z.ZodType | undefined, field: string): PatternRule {
  let inner: z.ZodType | undefined = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : undefined;
  if (inner instanceof z.ZodPipe) inner = inner.in as z.ZodType;
  const pattern = (inner as { _zod?: { pattern?: unknown } } | undefined)?._zod?.pattern;
  if (!(pattern instanceof RegExp)) throw new Error(`event-check: ${field} is not an optional string format; teach the compiled check`);
  return { pattern };
}

/** Every field the compiled check knows; a schema with another field fails at start-up. */
const KNOWN = new Set(['eventName', 'userId', 'properties', 'timestamp', 'eventId', 'name', 'sentAt']);

function compile(schema: z.ZodType) {
  const shape = objectOf(schema).shape as Record<string, z.ZodType>;
  for (const field of Object.keys(shape)) {
    if (!KNOWN.has(field)) throw new Error(`event-check: the schema has a field the compiled check does not know: ${field}`);
  }
  return {
    eventName: stringRule(shape.eventName, 'eventName'),
    userId: stringRule(shape.userId, 'userId'),
    timestamp: patternRule(shape.timestamp, 'timestamp'),
    eventId: patternRule(shape.eventId, 'eventId'),
    sentAt: shape.sentAt ? patternRule(shape.sentAt, 'sentAt') : undefined,
  };
}

const EVENT = compile(TrackEventBody);
const TRACK = compile(TrackRequestBody);
const SENT_AT = patternRule(objectOf(BatchEventsBody).shape.sentAt as z.ZodType, 'sentAt');

/** What the routes read of an event body (TrackEventBody's output, without the alias). */
export type CheckedEvent = {
  eventName: string;
  userId: string;
  properties?: Record<string, unknown> | null | undefined;
  timestamp?: string | undefined;
  eventId?: string | undefined;
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const inBounds = (value: unknown, rule: StringRule): value is string =>
  typeof value === 'string' && value.length >= rule.min && value.length <= rule.max;

const optionalMatch = (value: unknown, rule: PatternRule): value is string | undefined =>
  value === undefined || (typeof value === 'string' && rule.pattern.test(value));

function propertiesOk(value: unknown): value is Record<string, unknown> | null | undefined {
  if (value === undefined || value === null) return true;
  // zod's record copy drops a top-level `__proto__` key (it sets the copy's prototype instead).
  if (!isPlainObject(value) || Object.hasOwn(value, '__proto__')) return false;
  // Flat properties, the common case, are bounded as measure() bounds them without its stacks
  // and result object (no allocation per event); a nested value takes measure().
  let flatBytes = 2;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const child = value[key];
    if (child !== null && typeof child === 'object') return nestedPropertiesOk(value);
    flatBytes += 4 + 6 * key.length + (typeof child === 'string' ? 2 + 6 * child.length : 25);
  }
  return flatBytes <= MAX_PROPERTIES_BYTES || Buffer.byteLength(JSON.stringify(value)) <= MAX_PROPERTIES_BYTES;
}

function nestedPropertiesOk(value: Record<string, unknown>): boolean {
  const { tooDeep, jsonBytesAtMost } = measure(value, MAX_PROPERTIES_DEPTH);
  if (tooDeep) return false;
  return jsonBytesAtMost <= MAX_PROPERTIES_BYTES || Buffer.byteLength(JSON.stringify(value)) <= MAX_PROPERTIES_BYTES;
}

function check(raw: unknown, rules: ReturnType<typeof compile>): (CheckedEvent & { sentAt?: string | undefined }) | undefined {
  if (!isPlainObject(raw)) return undefined;
  // Keys that camelKeys or the alias would rename, and prototype names zod's copy would treat
  // apart: left to zod.
  for (const key in raw) {
    if (key.includes('_') || key === 'name') return undefined;
  }
  const { eventName, userId, properties, eventId } = raw;
  // `timestamp: null` is an absent timestamp, as originSdkEventBody reads it (the Kotlin SDK).
  const timestamp = raw.timestamp === null ? undefined : raw.timestamp;
  if (!inBounds(eventName, rules.eventName) || !inBounds(userId, rules.userId)) return undefined;
  if (!optionalMatch(timestamp, rules.timestamp) || !optionalMatch(eventId, rules.eventId)) return undefined;
  if (!propertiesOk(properties)) return undefined;
  const checked: CheckedEvent & { sentAt?: string | undefined } = {
    eventName,
    userId,
    properties,
    timestamp,
    eventId: eventId === undefined ? undefined : eventId.toLowerCase(),
  };
  if (rules.sentAt) {
    const sentAt = raw.sentAt;
    if (!optionalMatch(sentAt, rules.sentAt)) return undefined;
    checked.sentAt = sentAt;
  }
  return checked;
}

/** One event of a batch as TrackEventBody accepts it, or undefined: then ask zod. */
export function checkEvent(raw: unknown): CheckedEvent | undefined {
  return check(raw, EVENT);
}

/** A /events/track body as TrackRequestBody accepts it, or undefined: then ask zod. */
export function checkTrackBody(raw: unknown): (CheckedEvent & { sentAt?: string | undefined }) | undefined {
  return check(raw, TRACK);
}

/** A /events/batch envelope as BatchEventsBody accepts it (its events unchecked), or undefined. */
export function checkBatchEnvelope(raw: unknown): { events: unknown[]; sentAt?: string | undefined } | undefined {
  if (!isPlainObject(raw)) return undefined;
  for (const key in raw) if (key.includes('_')) return undefined;
  const { events, sentAt } = raw;
  if (!Array.isArray(events) || events.length < 1 || events.length > MAX_BATCH_EVENTS) return undefined;
  if (!optionalMatch(sentAt, SENT_AT)) return undefined;
  return { events, sentAt };
}
