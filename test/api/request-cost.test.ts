import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import Koa from 'koa';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { InProcessCounter } from '../../src/api/middleware/rate-limit.js';
import { requestLog } from '../../src/api/middleware/request-log.js';
import type { AppState } from '../../src/api/state.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { assertDocumented } from '../helpers/openapi-validator.js';
import { useTestServer } from '../helpers/server.js';

/**
 * What the request path's shortcuts (issue 31, "The request's own cost"; BENCHMARKS.md) must still
 * do exactly: compressed bodies decoded in one call answer as the streamed parser did, the
 * ingestion routes answered without the router keep the router's answers and labels, the
 * in-process rate limiter counts as rate-limiter-flexible's memory limiter did, and the request
 * log, written without the redaction pass, is still one line per request with its fields.
 */
describe('the ingestion request path without its per-request extras', () => {
  const server = useTestServer();
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  async function post(path: string, body: Buffer, encoding: string) {
    const response = await fetch(server.url + path, {
      method: 'POST',
      headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    });
    const text = await response.text();
    assertDocumented({ method: 'POST', path, status: response.status, headers: response.headers, text });
    return { status: response.status, body: JSON.parse(text), headers: response.headers };
  }

  it('gzip, deflate and br bodies are read on both routes; a leading BOM is dropped as before', async () => {
    const batch = (name: string) => JSON.stringify({ events: [{ eventName: name, userId: 'u', eventId: randomUUID() }] });
    const cases: [string, (text: string) => Buffer][] = [
      ['gzip', (text) => gzipSync(text)],
      ['deflate', (text) => deflateSync(text)],
      ['br', (text) => brotliCompressSync(text)],
    ];
    for (const [encoding, compress] of cases) {
      const answer = await post('/api/v1/events/batch', compress(batch(`enc_${encoding}`)), encoding);
      expect(answer.status, `${encoding}: ${JSON.stringify(answer.body)}`).toBe(200);
      expect(answer.body.accepted, encoding).toBe(1);
      const track = await post(
        '/api/v1/events/track',
        compress(JSON.stringify({ eventName: `enc_${encoding}_track`, userId: 'u' })),
        encoding,
      );
      expect(track.status, encoding).toBe(200);
    }
    const bom = await post('/api/v1/events/track', gzipSync(`\uFEFF${JSON.stringify({ eventName: 'bom', userId: 'u' })}`), 'gzip');
    expect(bom.status, JSON.stringify(bom.body)).toBe(200);
    await server.eventsVisible();
    const rows = await server.clickhouseRows<{ n: string }>('SELECT count() AS n FROM events WHERE project_id = {p:UUID}', {
      p: project.id,
    });
    expect(Number(rows[0]?.n)).toBe(7);
  });

  it('the ingestion routes answered before the router: 405 with Allow for another method, the route pattern in the telemetry', async () => {
    const get = await server.request('GET', '/api/v1/events/track', { apiKey: project.apiKey });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toContain('POST');
    const tracked = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'label', userId: 'u' },
    });
    expect(tracked.status).toBe(200);
    expect(tracked.headers.get('ratelimit-limit')).not.toBeNull();
    expect(tracked.headers.get('x-request-id')).toEqual(expect.any(String));
    const metrics = await server.services.telemetry.registry.getSingleMetricAsString('feedback_http_requests_total');
    expect(metrics).toMatch(/feedback_http_requests_total\{[^}]*route="\/api\/v1\/events\/track"[^}]*status="200"[^}]*\} [1-9]/);
    const unauthenticated = await server.request('POST', '/api/v1/events/batch', { apiKey: 'fbk_wrong', body: { events: [] } });
    expect(unauthenticated.status).toBe(401);
  });
  it('a compressed body keeps the streamed parser’s refusals: bad JSON, __proto__, not an object, too large, unknown spelling', async () => {
    const invalid = { error: true, reason: 'body: invalid JSON', message: 'body: invalid JSON' };
    expect((await post('/api/v1/events/track', gzipSync('{"eventName":'), 'gzip')).body).toEqual(invalid);
    expect((await post('/api/v1/events/track', gzipSync('"just a string"'), 'gzip')).body).toEqual(invalid);
    const poisoned = await post('/api/v1/events/track', gzipSync('{"eventName":"e","userId":"u","__proto__":{"x":1}}'), 'gzip');
    expect(poisoned).toMatchObject({ status: 400, body: invalid });
    // Only the exact lower-case names are read, as before; another spelling is a 415.
    const upper = await post('/api/v1/events/track', gzipSync(JSON.stringify({ eventName: 'e', userId: 'u' })), 'GZIP');
    expect(upper.status).toBe(415);
    // Last: the server answers before reading the rest and closes that connection.
    // Random bytes do not compress: the compressed body itself is past the 1 MiB limit.
    const incompressible = gzipSync(
      JSON.stringify({ eventName: 'big', userId: 'u', properties: { r: randomBytes(1100 * 1024).toString('latin1') } }),
    );
    expect(incompressible.length).toBeGreaterThan(1024 * 1024);
    const tooLarge = await post('/api/v1/events/track', incompressible, 'gzip');
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.reason).toBe('body: too large: the limit is 1048576 bytes (1 MiB), decompressed');
  });
});

describe('the in-process rate limit counter (no REDIS_URL)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('counts fixed windows per subject from their first request, with the verdicts of the memory limiter', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-28T00:00:00.000Z'));
    const counter = new InProcessCounter({ points: 3, windowSeconds: 60 });
    expect([1, 2, 3, 4].map(() => counter.consume('project:a'))).toEqual([
      { allowed: true, limit: 3, remaining: 2, msBeforeReset: 60_000 },
      { allowed: true, limit: 3, remaining: 1, msBeforeReset: 60_000 },
      { allowed: true, limit: 3, remaining: 0, msBeforeReset: 60_000 },
      { allowed: false, limit: 3, remaining: 0, msBeforeReset: 60_000 },
    ]);
    expect(counter.consume('project:b')).toMatchObject({ allowed: true, remaining: 2 });
    expect(counter.spent('project:a')).toMatchObject({ allowed: false, remaining: 0 });
    expect(counter.spent('project:b')).toBeNull();
    vi.setSystemTime(new Date('2026-11-28T00:00:59.000Z'));
    expect(counter.consume('project:a')).toMatchObject({ allowed: false, msBeforeReset: 1000 });
    vi.setSystemTime(new Date('2026-11-28T00:01:00.000Z'));
    expect(counter.spent('project:a')).toBeNull();
    expect(counter.consume('project:a')).toEqual({ allowed: true, limit: 3, remaining: 2, msBeforeReset: 60_000 });
    expect(counter.describe()).toBe('3 per minute');
  });
});

describe('the request log', () => {
  it('writes one line per request with its id, route, status and project, and never a header', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    // The service's redaction (core/logger.ts) on the parent: other lines keep it.
    const logger = pino({ level: 'info', redact: { paths: ['*.api_key', 'api_key'], censor: '[redacted]' } }, sink);
    const app = new Koa<AppState>();
    app.use(requestLog(logger));
    app.use((ctx) => {
      ctx.state.project = { id: 'p-1' } as AppState['project'];
      ctx.status = ctx.path === '/missing' ? 404 : 200;
      ctx.body = { ok: true };
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const given = await fetch(`${base}/given?x=1`, { headers: { 'x-request-id': 'req-1', 'x-api-key': 'fbk_secret' } });
      expect(given.headers.get('x-request-id')).toBe('req-1');
      const made = await fetch(`${base}/missing`, { headers: { 'x-request-id': 'bad id with spaces' } });
      const madeId = made.headers.get('x-request-id');
      expect(madeId).toMatch(/^[0-9a-f-]{36}$/);
      logger.info({ api_key: 'fbk_other' }, 'other');
      await new Promise((resolve) => setImmediate(resolve));
      const requests = lines.filter((line) => line.msg === 'request');
      expect(requests).toEqual([
        expect.objectContaining({ level: 30, requestId: 'req-1', method: 'GET', route: '/given', status: 200, projectId: 'p-1' }),
        expect.objectContaining({ level: 30, requestId: madeId, method: 'GET', route: '/missing', status: 404, projectId: 'p-1' }),
      ]);
      for (const line of requests) expect(line.durationMs).toEqual(expect.any(Number));
      expect(JSON.stringify(lines)).not.toContain('fbk_secret');
      expect(lines.find((line) => line.msg === 'other')?.api_key).toBe('[redacted]');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
