import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

type StoredEvent = {
  event_id: string;
  event_name: string;
  user_id: string;
  properties_raw: string;
  created_at: string;
};

describe.each([
  { mode: 'embedded (durable local log)', redis: false },
  { mode: 'BullMQ on Redis', redis: true },
])('event ingestion, $mode', ({ redis }) => {
  const server = useTestServer({ redis });
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server, { plan: 'free' });
  });

  /** The project's stored events once `count` of them are in ClickHouse. */
  async function storedEvents(count: number, projectId = project.id): Promise<StoredEvent[]> {
    let rows: StoredEvent[] = [];
    await eventually(`${count} events in ClickHouse`, 15_000, async () => {
      rows = await server.clickhouseRows<StoredEvent>(
        `SELECT toString(event_id) AS event_id, event_name, user_id, properties_raw, toString(created_at) AS created_at
         FROM events WHERE project_id = {p:UUID} ORDER BY created_at, event_id`,
        { p: projectId },
      );
      return rows.length >= count;
    });
    return rows;
  }

  it.skipIf(redis && !withRedis)('POST /events/track answers the Tracked event of SPEC 2.7 and stores one row', async () => {
    const response = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'feedback_list', userId: 'u1', properties: { screen: 'home', n: 3, nested: { a: true } } },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    // SPEC 2.7's fields, and `success: true` beside them for the origin's Kotlin SDK (docs/clients.md).
    expect(Object.keys(response.body).sort()).toEqual(['created_at', 'event_name', 'id', 'properties', 'success', 'user_id']);
    expect(response.body).toMatchObject({
      event_name: 'feedback_list',
      user_id: 'u1',
      properties: { screen: 'home', n: 3, nested: { a: true } },
    });
    // A server id is a UUIDv7: version nibble 7.
    expect(response.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const rows = await storedEvents(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event_id: response.body.id, event_name: 'feedback_list', user_id: 'u1' });
    expect(JSON.parse(rows[0]?.properties_raw ?? '')).toEqual({ screen: 'home', n: 3, nested: { a: true } });
    const [byProperty] = await server.clickhouseRows<{ screen: string }>(
      'SELECT properties.screen::String AS screen FROM events WHERE project_id = {p:UUID}',
      { p: project.id },
    );
    expect(byProperty?.screen).toBe('home');
  });

  it.skipIf(redis && !withRedis)('accepts snake_case fields, custom event names on Free, and no properties (null)', async () => {
    const p = await createProject(server, { plan: 'free' });
    const response = await server.request('POST', '/api/v1/events/track', {
      apiKey: p.apiKey,
      body: { event_name: 'checkout_started', user_id: 'u2' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ event_name: 'checkout_started', user_id: 'u2', properties: null });
    const rows = await storedEvents(1, p.id);
    expect(rows[0]).toMatchObject({ event_name: 'checkout_started', properties_raw: '' });
  });

  it.skipIf(redis && !withRedis)('`name` is read as eventName (the origin Kotlin SDK); eventName wins when both are sent', async () => {
    const p = await createProject(server, { plan: 'pro' });
    // The Kotlin SDK's track body: name, user_id, string properties, a timestamp.
    const kotlin = await server.request('POST', '/api/v1/events/track', {
      apiKey: p.apiKey,
      body: { name: 'kotlin_opened', user_id: 'k1', properties: { screen: 'home' } },
    });
    expect(kotlin.status, JSON.stringify(kotlin.body)).toBe(200);
    expect(kotlin.body).toMatchObject({ event_name: 'kotlin_opened', user_id: 'k1', properties: { screen: 'home' } });
    const both = await server.request('POST', '/api/v1/events/track', {
      apiKey: p.apiKey,
      body: { eventName: 'spec_name', name: 'other_name', userId: 'k1' },
    });
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ event_name: 'spec_name' });
    const batch = await server.request('POST', '/api/v1/events/batch', {
      apiKey: p.apiKey,
      body: {
        events: [
          { name: 'kotlin_batch', userId: 'k1' },
          { name: '', userId: 'k1' },
          { event_name: 'snake', name: 'x', userId: 'k1' },
        ],
      },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results.map((r: { status: string }) => r.status)).toEqual(['accepted', 'rejected', 'accepted']);
    expect(batch.body.results[1].reason).toBe('eventName: must be 1 to 100 characters');
    const rows = await storedEvents(4, p.id);
    expect(rows.map((row) => row.event_name).sort()).toEqual(['kotlin_batch', 'kotlin_opened', 'snake', 'spec_name']);
  });

  it.skipIf(redis && !withRedis)('an optional timestamp becomes created_at; the window is 1 hour ahead to 2 years back', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const past = new Date(Date.now() - 400 * 24 * 3600 * 1000).toISOString();
    const ok = await server.request('POST', '/api/v1/events/track', {
      apiKey: p.apiKey,
      body: { eventName: 'offline', userId: 'u', timestamp: past },
    });
    expect(ok.status).toBe(200);
    // The answer in whole seconds (as the origin's Swift SDK decodes them); the stored event keeps its milliseconds.
    expect(ok.body.created_at).toBe(past.replace(/\.\d+Z$/, 'Z'));
    const rows = await storedEvents(1, p.id);
    expect(new Date(`${rows[0]?.created_at.replace(' ', 'T')}Z`).toISOString()).toBe(past);

    for (const timestamp of [
      new Date(Date.now() + 2 * 3600 * 1000).toISOString(),
      new Date(Date.now() - 3 * 365 * 24 * 3600 * 1000).toISOString(),
      'yesterday',
      '2026-01-01T00:00:00', // no time zone
    ]) {
      const refused = await server.request('POST', '/api/v1/events/track', {
        apiKey: p.apiKey,
        body: { eventName: 'offline', userId: 'u', timestamp },
      });
      expect(refused.status, timestamp).toBe(400);
      expect(refused.body).toEqual({
        error: true,
        reason: expect.stringContaining('timestamp'),
        message: expect.stringContaining('timestamp'),
      });
    }
  });

  it.skipIf(redis && !withRedis)('eventId makes a retried request idempotent: stored once, same response', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const eventId = randomUUID();
    const body = { eventName: 'purchase', userId: 'u9', eventId, properties: { amount: 5 } };
    const first = await server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body });
    expect(first.status).toBe(200);
    expect(first.body.id).toBe(eventId);
    // Fixed on purpose: the retries come a moment later, as a client's would, not in the same flush.
    await sleep(20);
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body })),
    );
    for (const retry of retries) {
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(first.body);
    }
    // The same id in a batch is the same event too.
    const batch = await server.request('POST', '/api/v1/events/batch', {
      apiKey: p.apiKey,
      body: { events: [body, { eventName: 'other', userId: 'u9' }] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.results[0]).toEqual({ status: 'duplicate', id: first.body.id });
    expect(batch.body.results[1]).toEqual({ status: 'accepted', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(batch.body).toMatchObject({ accepted: 1, duplicates: 1, rejected: 0 });
    const rows = await storedEvents(2, p.id);
    // Everything acknowledged has been through the queue or log by then: a duplicate it wrongly
    // stored would be counted below.
    await server.eventsVisible();
    const again = await storedEvents(2, p.id);
    expect(again.filter((row) => row.event_id === eventId)).toHaveLength(1);
    expect(again).toHaveLength(rows.length);
    expect(again).toHaveLength(2);

    // The same eventId in another project is another event.
    const other = await createProject(server, { plan: 'pro' });
    const elsewhere = await server.request('POST', '/api/v1/events/track', { apiKey: other.apiKey, body });
    expect(elsewhere.status).toBe(200);
    expect(await storedEvents(1, other.id)).toHaveLength(1);
  });

  it.skipIf(redis && !withRedis)('POST /events/batch stores every event and answers a result per event, in order', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const events = Array.from({ length: 1000 }, (_, i) => ({
      eventName: i % 2 ? 'feedback_detail' : 'custom_thing',
      userId: `user-${i % 37}`,
      properties: { i },
    }));
    const response = await server.request('POST', '/api/v1/events/batch', { apiKey: p.apiKey, body: { events } });
    expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(200);
    expect(response.body).toMatchObject({ accepted: 1000, duplicates: 0, rejected: 0 });
    expect(response.body.results).toHaveLength(1000);
    // The lean answer: the status and the stored id of each event, in the order sent.
    expect(response.body.results[5]).toEqual({ status: 'accepted', id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const rows = await storedEvents(1000, p.id);
    expect(rows).toHaveLength(1000);
    expect(new Set(rows.map((row) => row.event_id)).size).toBe(1000);
    const ids: string[] = response.body.results.map((result: { id: string }) => result.id);
    expect(new Set(ids)).toEqual(new Set(rows.map((row) => row.event_id)));
    const fifth = rows.find((row) => row.event_id === ids[5]);
    expect(fifth).toMatchObject({ event_name: 'feedback_detail', user_id: 'user-5' });
  });

  it.skipIf(redis && !withRedis)('POST /events/batch?echo=true answers each stored event whole (a duplicate: the first one)', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const eventId = randomUUID();
    const events = [
      { eventName: 'echoed', userId: 'u1', eventId, properties: { n: 1 } },
      { eventName: 'echoed_again', userId: 'u2', eventId, properties: { n: 2 } },
      { userId: 'u3' },
    ];
    const response = await server.request('POST', '/api/v1/events/batch?echo=true', { apiKey: p.apiKey, body: { events } });
    expect(response.status).toBe(200);
    const stored = { id: eventId, event_name: 'echoed', user_id: 'u1', properties: { n: 1 }, created_at: expect.any(String) };
    expect(response.body).toEqual({
      accepted: 1,
      duplicates: 1,
      rejected: 1,
      results: [
        { status: 'accepted', event: stored },
        { status: 'duplicate', event: stored },
        { status: 'rejected', reason: 'eventName: is required' },
      ],
    });
    const lean = await server.request('POST', '/api/v1/events/batch?echo=false', {
      apiKey: p.apiKey,
      body: { events: events.slice(0, 1) },
    });
    expect(lean.body).toEqual({ accepted: 0, duplicates: 1, rejected: 0, results: [{ status: 'duplicate', id: eventId }] });
    const bad = await server.request('POST', '/api/v1/events/batch?echo=maybe', { apiKey: p.apiKey, body: { events } });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('echo: must be true or false');
  });

  it.skipIf(redis && !withRedis)('concurrent track requests are all stored, each once', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body: { eventName: 'tap', userId: `u${i}` } }),
      ),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    const rows = await storedEvents(200, p.id);
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((row) => row.event_id))).toEqual(new Set(responses.map((r) => r.body.id)));
  });

  it.skipIf(redis && !withRedis)(
    'a new eventId sent by many requests at once, across several flushes: stored once, one answer',
    async () => {
      const p = await createProject(server, { plan: 'pro' });
      const eventId = randomUUID();
      const body = { eventName: 'purchase', userId: 'u1', eventId };
      // Staggered so that the copies land in different, overlapping flushes, among other traffic.
      const responses = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          await sleep(i * 2); // pacing, not waiting for anything
          const [copy] = await Promise.all([
            server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body }),
            server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body: { eventName: 'tap', userId: `other-${i}` } }),
          ]);
          return copy;
        }),
      );
      for (const response of responses) {
        expect(response.status).toBe(200);
        expect(response.body).toEqual(responses[0]?.body);
      }
      const rows = await storedEvents(41, p.id);
      // Everything acknowledged has been through the queue or log: a wrongly stored copy shows.
      await server.eventsVisible();
      const again = await storedEvents(41, p.id);
      expect(again).toHaveLength(rows.length);
      expect(again.filter((row) => row.event_id === eventId)).toHaveLength(1);
    },
  );

  it.skipIf(redis && !withRedis)('bad bodies are 400 naming the field, and nothing is stored', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const cases: [unknown, string][] = [
      [{ userId: 'u' }, 'eventName'],
      [{ eventName: '', userId: 'u' }, 'eventName'],
      [{ eventName: 'x'.repeat(101), userId: 'u' }, 'eventName'],
      [{ eventName: 'e' }, 'userId'],
      [{ eventName: 'e', userId: '' }, 'userId'],
      [{ eventName: 'e', userId: 'u', properties: [1, 2] }, 'properties'],
      [{ eventName: 'e', userId: 'u', properties: 'text' }, 'properties'],
      [{ eventName: 'e', userId: 'u', properties: { big: 'x'.repeat(33 * 1024) } }, 'properties'],
      [{ eventName: 'e', userId: 'u', eventId: 'not-a-uuid' }, 'eventId'],
    ];
    for (const [body, field] of cases) {
      const response = await server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body });
      expect(response.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(response.body).toEqual({ error: true, reason: expect.stringContaining(field), message: expect.stringContaining(field) });
    }
    const batchCases: [unknown, string][] = [
      [{ events: [] }, 'events'],
      [{ events: 'x' }, 'events'],
      [{}, 'events'],
      [{ events: Array.from({ length: 1001 }, () => ({ eventName: 'e', userId: 'u' })) }, 'events'],
      [{ events: [{ eventName: 'ok', userId: 'u' }], sentAt: 'yesterday' }, 'sentAt'],
      [[{ eventName: 'ok', userId: 'u' }], 'body'],
    ];
    for (const [body, field] of batchCases) {
      const response = await server.request('POST', '/api/v1/events/batch', { apiKey: p.apiKey, body });
      expect(response.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(response.body).toEqual({ error: true, reason: expect.stringContaining(field), message: expect.stringContaining(field) });
    }
    // A valid event sent last proves the pipeline is live; only it may be stored.
    await server.request('POST', '/api/v1/events/track', { apiKey: p.apiKey, body: { eventName: 'sentinel', userId: 'u' } });
    // Everything acknowledged has been through the queue or log: a wrongly stored bad event shows.
    await server.eventsVisible();
    const rows = await storedEvents(1, p.id);
    expect(rows.map((row) => row.event_name)).toEqual(['sentinel']);
  });

  it.skipIf(redis && !withRedis)('401 without a valid X-API-Key and 403 for a suspended project', async () => {
    const missing = await server.request('POST', '/api/v1/events/track', { body: { eventName: 'e', userId: 'u' } });
    expect(missing.status).toBe(401);
    const p = await createProject(server, { plan: 'pro' });
    await server.request('PATCH', `/api/v1/admin/projects/${p.id}`, { bearer: server.operatorToken, body: { suspended: true } });
    const suspended = await server.request('POST', '/api/v1/events/batch', {
      apiKey: p.apiKey,
      body: { events: [{ eventName: 'e', userId: 'u' }] },
    });
    expect(suspended.status).toBe(403);
    expect(suspended.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  });
});
