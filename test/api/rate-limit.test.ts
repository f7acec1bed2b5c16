import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createHttpServer } from '../../src/api/http-server.js';
import { RateLimits } from '../../src/api/middleware/rate-limit.js';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { createAccount, createProject, type TestAccount, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { redisAvailable } from '../helpers/redis.js';
import { type HttpResponse, type RequestOptions, requestTo, TEST_REDIS_URL, useTestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

/**
 * Small budgets with minute windows, so that a slow machine cannot straddle a window boundary in
 * the middle of a test. One reverse proxy is trusted, so each test plays its own client IP in
 * X-Forwarded-For; requests without it come from 127.0.0.1.
 */
const SMALL_BUDGETS = {
  RATE_LIMIT_INGEST: '4/min',
  RATE_LIMIT_API: '6/min',
  RATE_LIMIT_AUTH_FAILURES: '3/min',
  TRUSTED_PROXY_HOPS: '1',
};

const from = (ip: string) => ({ 'x-forwarded-for': ip });

/** HTTP requests to any base URL (the test server's helper is bound to its own), checked against the document. */
function client(base: string) {
  return <T = any>(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse<T>> =>
    requestTo<T>(base, method, path, options);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** The RateLimit-* headers of a response, as numbers (NaN when absent). */
function budget(response: HttpResponse) {
  return {
    limit: Number(response.headers.get('ratelimit-limit')),
    remaining: Number(response.headers.get('ratelimit-remaining')),
    reset: Number(response.headers.get('ratelimit-reset')),
  };
}

/** A 429 in the SPEC 7.1 body, with Retry-After and the spent budget's headers. */
function expectTooMany(response: HttpResponse, limit: number, reasonPart: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(429);
  expect(response.body).toEqual({ error: true, reason: expect.stringContaining(reasonPart), message: expect.stringContaining(reasonPart) });
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`).toBe(true);
  const { limit: header, remaining, reset } = budget(response);
  expect({ header, remaining }).toEqual({ header: limit, remaining: 0 });
  expect(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`).toBe(true);
}

const track = { eventName: 'tap', userId: 'u1' };

describe('rate-limit configuration', () => {
  it('defaults: ingestion 1000/s and other routes 100/s per key or token, 20 failed authentications per minute per IP', () => {
    const config = loadConfig({});
    expect(config.rateLimits).toEqual({
      ingest: { points: 1000, windowSeconds: 1 },
      api: { points: 100, windowSeconds: 1 },
      authFailures: { points: 20, windowSeconds: 60 },
      anonymous: { points: 30, windowSeconds: 3600 },
      trustedProxyHops: 0,
    });
    expect(config.http).toEqual({ requestTimeoutMs: 60_000, headersTimeoutMs: 15_000, keepAliveTimeoutMs: 5_000 });
  });

  it('reads <requests>/<window>; 0 or off turns a budget off', () => {
    const config = loadConfig({ RATE_LIMIT_INGEST: '6000/min', RATE_LIMIT_API: 'off', RATE_LIMIT_AUTH_FAILURES: '5/10s' });
    expect(config.rateLimits.ingest).toEqual({ points: 6000, windowSeconds: 60 });
    expect(config.rateLimits.api).toBeNull();
    expect(config.rateLimits.authFailures).toEqual({ points: 5, windowSeconds: 10 });
    expect(loadConfig({ RATE_LIMIT_API: '0' }).rateLimits.api).toBeNull();
  });

  it.each([
    ['RATE_LIMIT_API', 'fast'],
    ['RATE_LIMIT_INGEST', '100'],
    ['RATE_LIMIT_AUTH_FAILURES', '20/day'],
    ['RATE_LIMIT_API', '10/25h'],
    ['TRUSTED_PROXY_HOPS', '-1'],
    ['HTTP_HEADERS_TIMEOUT_SECONDS', '0'],
    ['HTTP_HEADERS_TIMEOUT_SECONDS', '120'],
  ])('refuses %s=%s with a one-line ConfigError naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name}: [^\\n]+$`));
  });
});

describe.each([
  { store: 'memory', redis: false },
  { store: 'Redis', redis: true },
])('rate limiting, $store store', ({ redis }) => {
  const skip = redis && !withRedis;
  const server = useTestServer({ redis, env: SMALL_BUDGETS });
  let a: TestProject;
  let b: TestProject;

  beforeAll(async () => {
    expect(server.services.rateLimits.store).toBe(redis ? 'redis' : 'memory');
    // Two operator requests and one admin request per account, all within the budgets.
    a = await createProject(server);
    b = await createProject(server);
  });

  it.skipIf(skip)(
    'a 200 carries RateLimit-Limit, -Remaining and -Reset; health checks and the OpenAPI document are not limited',
    async () => {
      const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: a.apiKey });
      expect(list.status).toBe(200);
      const { limit, remaining, reset } = budget(list);
      expect({ limit, remaining }).toEqual({ limit: 6, remaining: 5 });
      expect(reset >= 1 && reset <= 60, `RateLimit-Reset ${reset}`).toBe(true);

      for (const path of ['/healthz', '/readyz', '/openapi/openapi.yaml', '/api/v1/openapi/openapi.yaml']) {
        const response = await server.request('GET', path);
        expect(response.status, path).toBe(200);
        expect(response.headers.get('ratelimit-limit'), path).toBeNull();
      }
    },
  );

  it.skipIf(skip)(
    'ingestion: a batch is one request; past the budget 429 with Retry-After; GET /feedbacks keeps its own budget',
    async () => {
      const remaining: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await server.request('POST', '/api/v1/events/track', { apiKey: a.apiKey, body: track });
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        expect(budget(response).limit).toBe(4);
        remaining.push(budget(response).remaining);
      }
      const events = Array.from({ length: 50 }, (_, i) => ({ eventName: 'tap', userId: `u${i}` }));
      const batch = await server.request('POST', '/api/v1/events/batch', { apiKey: a.apiKey, body: { events } });
      expect(batch.status).toBe(200);
      expect(batch.body.accepted).toBe(50);
      remaining.push(budget(batch).remaining);
      expect(remaining).toEqual([3, 2, 1, 0]);

      expectTooMany(await server.request('POST', '/api/v1/events/track', { apiKey: a.apiKey, body: track }), 4, 'API key');
      expectTooMany(await server.request('POST', '/api/v1/events/batch', { apiKey: a.apiKey, body: { events } }), 4, 'API key');

      // Other routes of the same key have their own budget, and other keys are not affected.
      const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: a.apiKey });
      expect(list.status).toBe(200);
      expect(budget(list)).toMatchObject({ limit: 6, remaining: 4 });
      const other = await server.request('POST', '/api/v1/events/track', { apiKey: b.apiKey, body: track });
      expect(other.status).toBe(200);
      expect(budget(other)).toMatchObject({ limit: 4, remaining: 3 });
    },
  );

  it.skipIf(skip)('other routes: per API key; after the budget every route of that key is 429, error responses count too', async () => {
    // Two of A's six are spent. A 404 after authentication is charged and carries the headers.
    const missing = await server.request('GET', '/api/v1/feedbacks/00000000-0000-4000-8000-000000000000', { apiKey: a.apiKey });
    expect(missing.status).toBe(404);
    expect(budget(missing)).toMatchObject({ limit: 6, remaining: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await server.request('GET', '/api/v1/feedbacks', { apiKey: a.apiKey })).status);
    expect(statuses).toEqual([200, 200, 200]);

    expectTooMany(await server.request('GET', '/api/v1/feedbacks', { apiKey: a.apiKey }), 6, 'API key');
    const create = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: a.apiKey,
      body: { title: 't', description: 'd', category: 'other', userId: 'u' },
    });
    expectTooMany(create, 6, 'API key');
    expectTooMany(await server.request('GET', '/api/v1/metrics/summary', { apiKey: a.apiKey }), 6, 'API key');
    // B's key is untouched.
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: b.apiKey })).status).toBe(200);
  });

  it.skipIf(skip)('admin routes: per admin token', async () => {
    // createProject spent one request of A's account.
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await server.request('GET', '/api/v1/projects', { bearer: a.account.adminToken })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expectTooMany(await server.request('GET', '/api/v1/projects', { bearer: a.account.adminToken }), 6, 'admin token');
    expectTooMany(
      await server.request('GET', `/api/v1/projects/${a.id}/metrics/summary`, { bearer: a.account.adminToken }),
      6,
      'admin token',
    );
    const other = await server.request('GET', '/api/v1/projects', { bearer: b.account.adminToken });
    expect(other.status).toBe(200);
    expect(budget(other)).toMatchObject({ limit: 6, remaining: 4 });
  });

  it.skipIf(skip)('operator routes: per operator token', async () => {
    // The two createAccount calls spent two of the operator's six.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await server.request('PATCH', `/api/v1/admin/accounts/${a.account.id}`, {
        bearer: server.operatorToken,
        body: { plan: 'pro' },
      });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200]);
    expectTooMany(
      await server.request('POST', '/api/v1/admin/sql', { bearer: server.operatorToken, body: { query: 'SELECT 1' } }),
      6,
      'operator token',
    );
  });

  it.skipIf(skip)(
    'failed authentication: each 401 spends the IP budget; then that IP gets 429 before its credentials are checked',
    async () => {
      const attacker = '203.0.113.10';
      const remaining: number[] = [];
      const attempts: [string, Record<string, string>][] = [
        ['/api/v1/feedbacks', { 'x-api-key': 'fbk_guess1' }],
        ['/api/v1/projects', { authorization: 'Bearer fba_guess2' }],
        ['/api/v1/feedbacks', {}],
      ];
      for (const [path, headers] of attempts) {
        const response = await server.request('GET', path, { headers: { ...from(attacker), ...headers } });
        expect(response.status).toBe(401);
        expect(response.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
        expect(budget(response).limit).toBe(3);
        remaining.push(budget(response).remaining);
      }
      expect(remaining).toEqual([2, 1, 0]);

      // Even a valid key, an admin or operator token, or a malformed body: refused before anything.
      const reason = 'failed authentication from this address';
      expectTooMany(await server.request('GET', '/api/v1/feedbacks', { apiKey: b.apiKey, headers: from(attacker) }), 3, reason);
      expectTooMany(await server.request('GET', '/api/v1/projects', { bearer: b.account.adminToken, headers: from(attacker) }), 3, reason);
      expectTooMany(
        await server.request('POST', '/api/v1/events/track', { apiKey: b.apiKey, rawBody: '{not json', headers: from(attacker) }),
        3,
        reason,
      );
      // A forged entry to the left of the one the trusted proxy appended changes nothing.
      const forged = await server.request('GET', '/api/v1/feedbacks', { apiKey: b.apiKey, headers: from(`198.51.100.7, ${attacker}`) });
      expectTooMany(forged, 3, reason);
      // Other clients are not affected, nor are health checks from the attacker.
      const neighbour = await server.request('GET', '/api/v1/feedbacks', { apiKey: b.apiKey, headers: from('203.0.113.11') });
      expect(neighbour.status).toBe(200);
      expect((await server.request('GET', '/healthz', { headers: from(attacker) })).status).toBe(200);
    },
  );

  it.skipIf(skip)('a budget set to off is not counted and sends no RateLimit headers', async () => {
    const rateLimits = new RateLimits(
      { ...server.services.config.rateLimits, api: null },
      server.services.redis ? { client: server.services.redis, prefix: server.services.config.queuePrefix } : undefined,
    );
    const http = createHttpServer(
      buildApp({ ...server.services, operatorToken: server.operatorToken, rateLimits }),
      server.services.config.http,
    );
    try {
      const request = client(await listen(http));
      for (let i = 0; i < 8; i++) {
        const response = await request('GET', '/api/v1/feedbacks', { apiKey: b.apiKey });
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit-limit')).toBeNull();
      }
    } finally {
      await close(http);
    }
  });
});

describe.skipIf(!withRedis)('Redis store: API processes sharing one Redis share the budgets', () => {
  const server = useTestServer({ redis: true, env: SMALL_BUDGETS });
  let second: Server | undefined;
  let secondRedis: Redis | undefined;
  let memoryOnly: Server | undefined;
  let project: TestProject;
  let account: TestAccount;

  beforeAll(async () => {
    account = await createAccount(server);
    project = await createProject(server, { account });
    // A second API instance as another process would be: its own Redis connection and limiter
    // state, the same QUEUE_PREFIX.
    secondRedis = new Redis(TEST_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    secondRedis.on('error', () => {});
    await new Promise((resolve) => secondRedis?.once('ready', resolve));
    const rateLimits = new RateLimits(server.services.config.rateLimits, {
      client: secondRedis,
      prefix: server.services.config.queuePrefix,
    });
    second = createHttpServer(
      buildApp({ ...server.services, operatorToken: server.operatorToken, rateLimits }),
      server.services.config.http,
    );
    // The control: an instance that counts in its own memory does not see the others' requests.
    memoryOnly = createHttpServer(
      buildApp({ ...server.services, operatorToken: server.operatorToken, rateLimits: new RateLimits(server.services.config.rateLimits) }),
      server.services.config.http,
    );
    stopWhenDone(async () => {
      await close(second);
      await close(memoryOnly);
      secondRedis?.disconnect();
    });
  });

  it('per-key and failed-authentication budgets are counted once across both instances; Redis keys hold ids, not secrets', async () => {
    const one = client(server.url);
    const two = client(await listen(second as Server));
    const control = client(await listen(memoryOnly as Server));

    const remaining: number[] = [];
    for (const request of [one, two, one, two]) {
      const response = await request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track });
      expect(response.status).toBe(200);
      remaining.push(budget(response).remaining);
    }
    expect(remaining).toEqual([3, 2, 1, 0]);
    expectTooMany(await one('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track }), 4, 'API key');
    expectTooMany(await two('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track }), 4, 'API key');
    // Without the shared store the budget would not hold.
    expect((await control('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track })).status).toBe(200);

    // Admin token: one request spent by createProject, five more split across the instances.
    for (const request of [two, one, two, one, two]) {
      expect((await request('GET', '/api/v1/projects', { bearer: account.adminToken })).status).toBe(200);
    }
    expectTooMany(await one('GET', '/api/v1/projects', { bearer: account.adminToken }), 6, 'admin token');

    // Failed authentication: failures on both instances add up for the IP.
    const attacker = '203.0.113.20';
    for (const request of [one, two, one]) {
      expect((await request('GET', '/api/v1/feedbacks', { apiKey: 'fbk_guess', headers: from(attacker) })).status).toBe(401);
    }
    expectTooMany(await two('GET', '/api/v1/feedbacks', { apiKey: project.apiKey, headers: from(attacker) }), 3, 'failed authentication');

    const prefix = server.services.config.queuePrefix;
    const keys = await server.services.redis!.keys(`${prefix}:ratelimit:*`);
    expect(keys).toEqual(
      expect.arrayContaining([
        `${prefix}:ratelimit:ingest:project:${project.id}`,
        `${prefix}:ratelimit:api:account:${account.id}`,
        `${prefix}:ratelimit:api:operator`,
        `${prefix}:ratelimit:auth-failures:${attacker}`,
      ]),
    );
    for (const secret of [project.apiKey, account.adminToken, server.operatorToken, 'fbk_guess']) {
      expect(keys.filter((key) => key.includes(secret))).toEqual([]);
    }
  });
});

describe('rate limiting without a reachable Redis', () => {
  const server = useTestServer({ env: SMALL_BUDGETS });

  it('falls back to per-process counting: requests are served and still limited', async () => {
    const project = await createProject(server);
    const deadRedis = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    deadRedis.on('error', () => {});
    const rateLimits = new RateLimits(server.services.config.rateLimits, { client: deadRedis, prefix: 'unreachable' });
    const http = createHttpServer(
      buildApp({ ...server.services, operatorToken: server.operatorToken, rateLimits }),
      server.services.config.http,
    );
    stopWhenDone(async () => {
      await close(http);
      deadRedis.disconnect();
    });
    const request = client(await listen(http));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});

describe('body size and connection limits', () => {
  const server = useTestServer();
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server);
  });

  const MiB = 1024 * 1024;

  it('413 in the SPEC 7.1 body past 1 MiB on every route and past 5 MiB on /events/batch', async () => {
    const big = 'x'.repeat(MiB + 1);
    const feedback = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.apiKey,
      body: { title: 't', description: big, category: 'other', userId: 'u' },
    });
    expect(feedback.status).toBe(413);
    expect(feedback.body).toEqual({
      error: true,
      reason: 'body: too large: the limit is 1048576 bytes (1 MiB)',
      message: 'body: too large: the limit is 1048576 bytes (1 MiB)',
    });
    const tracked = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { ...track, properties: { big } },
    });
    expect(tracked.status).toBe(413);
    expect(tracked.body).toEqual({
      error: true,
      reason: 'body: too large: the limit is 1048576 bytes (1 MiB)',
      message: 'body: too large: the limit is 1048576 bytes (1 MiB)',
    });

    // 2 MiB is fine for a batch (500 events of 4 KiB properties)...
    const events = Array.from({ length: 500 }, (_, i) => ({ eventName: 'big', userId: `u${i}`, properties: { blob: 'y'.repeat(4096) } }));
    const accepted = await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } });
    expect(accepted.status, JSON.stringify(accepted.body).slice(0, 200)).toBe(200);
    expect(accepted.body.accepted).toBe(500);
    // ...past 5 MiB it is not.
    const huge = await server.request('POST', '/api/v1/events/batch', {
      apiKey: project.apiKey,
      body: { events: [{ ...track, properties: { blob: 'z'.repeat(5 * MiB) } }] },
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({
      error: true,
      reason: 'body: too large: the limit is 5242880 bytes (5 MiB)',
      message: 'body: too large: the limit is 5242880 bytes (5 MiB)',
    });
  });

  describe('slow and idle connections are closed', () => {
    let http: Server | undefined;
    let port = 0;
    beforeAll(async () => {
      const timeouts = loadConfig({
        HTTP_REQUEST_TIMEOUT_SECONDS: '2',
        HTTP_HEADERS_TIMEOUT_SECONDS: '1',
        HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
      }).http;
      http = createHttpServer(buildApp({ ...server.services, operatorToken: server.operatorToken }), timeouts);
      port = Number(new URL(await listen(http)).port);
      stopWhenDone(async () => {
        await close(http);
      });
    });

    /** Writes `chunks` to a raw connection and resolves with what the server sent once it closes it. */
    function rawConnection(first: string): { socket: net.Socket; closed: Promise<{ received: string; afterMs: number }> } {
      const started = Date.now();
      const socket = net.connect(port, '127.0.0.1');
      let received = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
      socket.on('error', () => {});
      socket.write(first);
      const closed = new Promise<{ received: string; afterMs: number }>((resolve) =>
        socket.on('close', () => resolve({ received, afterMs: Date.now() - started })),
      );
      return { socket, closed };
    }

    it('headers that never finish: 408 and closed after the headers timeout', async () => {
      const { closed } = rawConnection('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      const { received, afterMs } = await closed;
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(afterMs).toBeGreaterThanOrEqual(900);
      expect(afterMs).toBeLessThan(5_000);
    });

    it('a body that trickles: 408 and closed after the request timeout', async () => {
      const { socket, closed } = rawConnection(
        `POST /api/v1/events/track HTTP/1.1\r\nHost: x\r\nX-API-Key: ${project.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
      );
      const trickle = setInterval(() => socket.writable && socket.write(' '), 300);
      try {
        const { received, afterMs } = await closed;
        expect(received).toMatch(/^HTTP\/1\.1 408/);
        expect(afterMs).toBeGreaterThanOrEqual(1_900);
        expect(afterMs).toBeLessThan(6_000);
      } finally {
        clearInterval(trickle);
      }
    });

    it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
      const { closed } = rawConnection('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      const { received, afterMs } = await closed;
      expect(received).toMatch(/^HTTP\/1\.1 200/);
      expect(received).toMatch(/Keep-Alive: timeout=1/i);
      expect(afterMs).toBeGreaterThanOrEqual(900);
      expect(afterMs).toBeLessThan(4_000);
    });
  });
});

describe.each([
  { store: 'memory', redis: false },
  { store: 'Redis', redis: true },
])('a burst on one key, $store store (charges of concurrent requests are coalesced)', ({ redis }) => {
  const skip = redis && !withRedis;
  const server = useTestServer({ redis, workers: false, env: { ...SMALL_BUDGETS, RATE_LIMIT_INGEST: '40/min' } });

  it.skipIf(skip)(
    '100 concurrent requests against a budget of 40: exactly 40 are served, each with its own RateLimit-Remaining',
    async () => {
      const project = await createProject(server);
      const responses = await Promise.all(
        Array.from({ length: 100 }, () => server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track })),
      );
      const served = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status !== 200);
      expect(served).toHaveLength(40);
      for (const response of refused) expectTooMany(response, 40, 'API key');
      // Each served request was counted once, in some order: remaining 39 down to 0, none twice.
      const remaining = served.map((response) => budget(response).remaining).sort((x, y) => x - y);
      expect(remaining).toEqual(Array.from({ length: 40 }, (_, i) => i));
      // Nothing more in this window.
      expectTooMany(await server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: track }), 40, 'API key');
    },
  );
});
