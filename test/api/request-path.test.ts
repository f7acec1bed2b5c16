import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

/**
 * What the trimmed request path of POST /events/track (BENCHMARKS.md, "BullMQ request path") must
 * still do exactly: its shortcuts (the properties' size bound, the storable-string check skipped
 * for bodies without a `\u` escape, the ingestion router that runs first) change no answer.
 */
describe.skipIf(!withRedis)('the BullMQ request path of POST /events/track', () => {
  const server = useTestServer({ redis: true });
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  const track = (rawBody: string) => server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, rawBody });
  const withProperties = (properties: unknown) => JSON.stringify({ eventName: 'sized', userId: 'u', properties });

  it('properties of exactly 32 KiB as JSON are accepted and one byte more refused, whatever the characters', async () => {
    // {"s":"…"} is 8 bytes around the string; é is 2 bytes in UTF-8, and " is serialized as \".
    const cases: [string, string, number][] = [
      ['ASCII', 'x', 32_760],
      ['two-byte characters', 'é', 16_380],
      ['quotes, escaped', '"', 16_380],
    ];
    for (const [label, char, fits] of cases) {
      expect(Buffer.byteLength(JSON.stringify({ s: char.repeat(fits) }))).toBe(32 * 1024);
      const ok = await track(withProperties({ s: char.repeat(fits) }));
      expect(ok.status, `${label}: ${JSON.stringify(ok.body).slice(0, 200)}`).toBe(200);
      const over = await track(withProperties({ s: char.repeat(fits + 1) }));
      expect(over.status, label).toBe(400);
      expect(over.body).toEqual({
        error: true,
        reason: 'properties: must be at most 32768 bytes as JSON',
        message: 'properties: must be at most 32768 bytes as JSON',
      });
    }
  });

  it('a \\u escape is read like the character it stands for: NUL and lone surrogates refused, others stored', async () => {
    const refused: [string, string][] = [
      ['{"eventName":"e","userId":"u","properties":{"a":"x\\u0000y"}}', 'properties.a'],
      ['{"eventName":"e","userId":"u\\ud800"}', 'userId'],
      ['{"eventName":"e","userId":"u","properties":{"k\\udc00":1}}', 'properties: a key'],
    ];
    for (const [rawBody, where] of refused) {
      const response = await track(rawBody);
      expect(response.status, rawBody).toBe(400);
      expect(response.body.reason).toContain(where);
    }
    const escaped = await track('{"eventName":"escaped","userId":"u\\u00e9","properties":{"emoji":"\\ud83d\\ude00"}}');
    expect(escaped.status, JSON.stringify(escaped.body)).toBe(200);
    expect(escaped.body).toMatchObject({ user_id: 'ué', properties: { emoji: '😀' } });
    const plain = await track('{"eventName":"plain","userId":"ué","properties":{"emoji":"😀"}}');
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
    expect(plain.body).toMatchObject({ user_id: 'ué', properties: { emoji: '😀' } });
    await eventually('both events in ClickHouse', 15_000, async () => {
      const rows = await server.clickhouseRows<{ user_id: string }>(
        "SELECT user_id FROM events WHERE project_id = {p:UUID} AND event_name IN ('escaped', 'plain')",
        { p: project.id },
      );
      return rows.length === 2 && rows.every((row) => row.user_id === 'ué');
    });
  });

  it('snake_case and camelCase bodies give the same event; camelCase wins when both are sent', async () => {
    const snake = await track('{"event_name":"cased","user_id":"snake"}');
    expect(snake.status).toBe(200);
    expect(snake.body).toMatchObject({ event_name: 'cased', user_id: 'snake' });
    const both = await track('{"eventName":"cased","userId":"camel","user_id":"snake"}');
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ user_id: 'camel' });
  });

  it('is counted under its route pattern, and its other methods are still 405 with Allow', async () => {
    const response = await server.request('GET', '/api/v1/events/track', { apiKey: project.apiKey });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const metrics = await server.services.telemetry.registry.getSingleMetricAsString('feedback_http_requests_total');
    expect(metrics).toMatch(/feedback_http_requests_total\{method="POST",route="\/api\/v1\/events\/track",status="200"\} \d+/);
  });

  it('every answer carries its request id and the key budget headers', async () => {
    const response = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      headers: { 'x-request-id': 'req-path-1' },
      body: { eventName: 'headers', userId: 'u' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('req-path-1');
    for (const name of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      expect(response.headers.get(name), name).toMatch(/^\d+$/);
    }
  });
});
