import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkBatchEnvelope, checkEvent, checkTrackBody } from '../../src/api/events/event-check.js';
import { BatchEventsBody, MAX_PROPERTIES_BYTES, TrackEventBody, TrackRequestBody } from '../../src/api/events/events.schema.js';
import {
  bodyOf,
  deepNesting,
  document,
  hostileString,
  hostileValue,
  RawBody,
  resolve,
  type Schema,
  surrogateOrNul,
} from '../helpers/fuzz-values.js';

/*
 * The ingestion routes check a body with a check compiled from the zod schemas (event-check.ts)
 * and ask zod only when that check cannot vouch for it. The routes accept and refuse exactly what
 * zod does, with zod's reasons, as long as: whatever the compiled check accepts, zod accepts, with
 * the same data. Held here over the fuzz corpus of test/api/fuzz.test.ts (bodies built from the
 * OpenAPI document's schemas, hostile values mixed in) and over generated cases at the edges of
 * each rule. The check must also take the common body (camelCase keys, no alias), or it is useless.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);

const schemaOf = (name: string) => resolve<Schema>({ $ref: `#/components/schemas/${name}` }) as Schema;
const ids = [randomUUID()];

/** The fields the routes read of an event body. */
const routeFields = (data: Record<string, unknown>) => ({
  eventName: data.eventName,
  userId: data.userId,
  properties: data.properties,
  timestamp: data.timestamp,
  eventId: data.eventId,
  ...('sentAt' in data ? { sentAt: data.sentAt } : {}),
});

/** A body the compiled check is meant to take when zod accepts it. */
function commonShape(raw: unknown): boolean {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return false;
  if (Object.keys(raw).some((key) => key.includes('_') || key === 'name')) return false;
  const properties = (raw as { properties?: unknown }).properties;
  return !(properties !== null && typeof properties === 'object' && Object.hasOwn(properties, '__proto__'));
}

function agrees(raw: unknown, compiled: (raw: unknown) => object | undefined, schema: typeof TrackEventBody | typeof TrackRequestBody) {
  const fast = compiled(raw);
  const zod = schema.safeParse(raw);
  if (fast !== undefined) {
    expect(zod.success, `zod refuses what the compiled check took: ${JSON.stringify(raw)?.slice(0, 300)}`).toBe(true);
    if (zod.success) expect(routeFields(fast as Record<string, unknown>)).toEqual(routeFields(zod.data as Record<string, unknown>));
  } else if (zod.success && commonShape(raw)) {
    expect.fail(`the compiled check left a common body to zod: ${JSON.stringify(raw)?.slice(0, 300)}`);
  }
}

/** A fuzz-corpus body as the route sees it: parsed JSON (a body that is not JSON never gets here). */
const parsed = (body: unknown): unknown => {
  if (!(body instanceof RawBody)) return body;
  try {
    return JSON.parse(body.text);
  } catch {
    return undefined;
  }
};

const hostile = fc.oneof(hostileString, surrogateOrNul);
const overflowLength = (n: number) => fc.constantFrom(n - 1, n, n + 1).map((length) => 'x'.repeat(Math.max(0, length)));

/** Values at the edges of each rule of an event body. */
const edgy = {
  eventName: fc.oneof(overflowLength(1), overflowLength(100), fc.string({ maxLength: 120 }), hostileValue(hostile)),
  userId: fc.oneof(overflowLength(1), overflowLength(255), fc.string({ maxLength: 20 }), hostileValue(hostile)),
  timestamp: fc.oneof(
    fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    fc.constantFrom(
      '2026-02-29T00:00:00Z',
      '2028-02-29T12:00:00+01:00',
      '2026-13-01T00:00:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31T12:00:00',
      '2026-01-31T12:00:00.123456789Z',
      '2026-01-31 12:00:00Z',
      '2026-01-31T12:00:00z',
      '2026-01-31T12:00:00+0100',
    ),
    hostileValue(hostile),
  ),
  eventId: fc.oneof(
    fc.uuid(),
    fc.uuid().map((id) => id.toUpperCase()),
    fc.constantFrom('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'),
    fc.constantFrom('0b7e8a3e-5d7f-0a8e-9c61-2f0c7a9b1d11', '0b7e8a3e5d7f4a8e9c612f0c7a9b1d11', `{${randomUUID()}}`),
    hostileValue(hostile),
  ),
  properties: fc.oneof(
    fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
    fc.constantFrom(
      null,
      [],
      [1, 2],
      'text',
      deepNesting(31),
      deepNesting(32),
      { big: 'x'.repeat(MAX_PROPERTIES_BYTES - 20) },
      { big: 'x'.repeat(MAX_PROPERTIES_BYTES) },
      { big: 'é'.repeat(MAX_PROPERTIES_BYTES / 2 - 8) },
      JSON.parse('{"__proto__":{"polluted":true},"kept":1}'),
      JSON.parse('{"nested":{"__proto__":{"x":1}}}'),
    ),
    hostileValue(hostile),
  ),
};
const key = (name: string) =>
  fc.constantFrom(
    name,
    name,
    name,
    name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
  );
const field = (name: keyof typeof edgy) =>
  fc.record({ present: fc.nat(5).map((n) => n > 0), name: key(name), value: edgy[name] as fc.Arbitrary<unknown> });
const edgyBody = (withSentAt: boolean) =>
  fc
    .record({
      fields: fc.tuple(field('eventName'), field('userId'), field('timestamp'), field('eventId'), field('properties')),
      sentAt: fc.option(edgy.timestamp, { nil: undefined }),
      alias: fc.option(edgy.eventName, { nil: undefined, freq: 4 }),
      extra: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
    })
    .map(({ fields, sentAt, alias, extra }) => {
      const body: Record<string, unknown> = { ...extra };
      for (const f of fields) if (f.present) body[f.name] = f.value;
      if (withSentAt && sentAt !== undefined) body.sentAt = sentAt;
      if (alias !== undefined) body.name = alias;
      return body;
    });

describe('the compiled check of the ingestion routes accepts only what zod accepts, with the same data', () => {
  it('one event of a batch (TrackEventBody): the fuzz corpus and the edges of each rule', () => {
    const corpus = bodyOf(schemaOf('BatchEvent'), ids, hostileString, 1).map(parsed);
    fc.assert(
      fc.property(fc.oneof(corpus, edgyBody(false)), (raw) => agrees(raw, checkEvent, TrackEventBody)),
      { numRuns: RUNS },
    );
  });

  it('a /events/track body (TrackRequestBody): the fuzz corpus and the edges of each rule', () => {
    const corpus = bodyOf(schemaOf('TrackEventRequest'), ids, hostileString, 1).map(parsed);
    fc.assert(
      fc.property(fc.oneof(corpus, edgyBody(true)), (raw) => agrees(raw, checkTrackBody, TrackRequestBody)),
      { numRuns: RUNS },
    );
  });

  it('a /events/batch envelope (BatchEventsBody)', () => {
    const envelope = fc.record(
      {
        events: fc.oneof(
          fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
          fc.constantFrom([], new Array(1000).fill({}), new Array(1001).fill({})),
          hostileValue(hostile),
        ),
        sentAt: edgy.timestamp,
        sent_at: edgy.timestamp,
      },
      { requiredKeys: [] },
    );
    const corpus = bodyOf(schemaOf('TrackEventBatchRequest'), ids, hostileString, 1).map(parsed);
    fc.assert(
      fc.property(fc.oneof(envelope, corpus), (raw) => {
        const fast = checkBatchEnvelope(raw);
        const zod = BatchEventsBody.safeParse(raw);
        if (fast !== undefined) {
          expect(zod.success).toBe(true);
          if (zod.success)
            expect({ events: fast.events, sentAt: fast.sentAt }).toEqual({ events: zod.data.events, sentAt: zod.data.sentAt });
        } else if (zod.success && commonShape(raw))
          expect.fail(`the compiled check left a common envelope to zod: ${JSON.stringify(raw)?.slice(0, 200)}`);
      }),
      { numRuns: RUNS },
    );
  });

  it('the OpenAPI document still describes the bodies the check was compiled from', () => {
    expect(Object.keys(schemaOf('BatchEvent').properties ?? {}).sort()).toEqual([
      'eventId',
      'eventName',
      'name',
      'properties',
      'timestamp',
      'userId',
    ]);
    expect(document.components?.schemas?.TrackEventRequest).toBeDefined();
  });
});
