import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createHttpServer } from '../../src/api/http-server.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { requestTo, useTestServer } from '../helpers/server.js';

const server = useTestServer();

const OPERATIONS = ['summary', 'timeseries', 'breakdown', 'events'] as const;
/** The parameters an operation needs besides the dates (breakdown requires a dimension). */
const EXTRA: Record<(typeof OPERATIONS)[number], string> = { summary: '', timeseries: '', breakdown: '&dimension=status', events: '' };

describe('metrics dates far out (no 500 from any input)', () => {
  let project: TestProject;
  beforeAll(async () => {
    // Team: the events feed answers (no 402 before the dates are read) and the window is 365 days.
    project = await createProject(server, { plan: 'team' });
  });

  const surfaces = () => [
    { prefix: '/api/v1/metrics', auth: { apiKey: project.apiKey } },
    { prefix: `/api/v1/projects/${project.id}/metrics`, auth: { bearer: project.account.adminToken } },
  ];

  for (const date of ['9999-12-31', '0000-01-01', '1969-12-31', '2100-01-01', '1999-12-31']) {
    it(`date_to=${date} is a 400 METRICS_INVALID_DATE on all 8 operations`, async () => {
      for (const { prefix, auth } of surfaces()) {
        for (const operation of OPERATIONS) {
          const path = `${prefix}/${operation}?date_to=${date}${EXTRA[operation]}`;
          const response = await server.request('GET', path, auth);
          expect(response.status, `${path}: ${JSON.stringify(response.body)}`).toBe(400);
          expect(response.body.error.code).toBe('METRICS_INVALID_DATE');
          expect(response.body.error.message).toMatch(/date_to must be a date from 2000-01-01 to 2099-12-31/);
        }
      }
    });
  }

  it('date_from and date_to both far out are a 400, on all 8 operations', async () => {
    for (const { prefix, auth } of surfaces()) {
      for (const operation of OPERATIONS) {
        for (const query of ['date_from=9999-12-01&date_to=9999-12-31', 'date_from=0000-01-01&date_to=0000-01-01']) {
          const response = await server.request('GET', `${prefix}/${operation}?${query}${EXTRA[operation]}`, auth);
          expect(response.status, JSON.stringify(response.body)).toBe(400);
          expect(response.body.error.code).toBe('METRICS_INVALID_DATE');
        }
      }
    }
  });

  it('a window reaching before 2000-01-01 names the parameter; one the plan narrows into range still answers', async () => {
    const early = await server.request('GET', '/api/v1/metrics/summary?date_from=1999-12-25&date_to=2000-01-05', {
      apiKey: project.apiKey,
    });
    expect(early.status).toBe(400);
    expect(early.body.error).toMatchObject({ code: 'METRICS_INVALID_DATE', message: expect.stringMatching(/^date_from must be/) });
    // date_to alone near the start: the default 30-day window would begin in 1999.
    const defaulted = await server.request('GET', '/api/v1/metrics/summary?date_to=2000-01-05', { apiKey: project.apiKey });
    expect(defaulted.status).toBe(400);
    expect(defaulted.body.error.message).toMatch(/^date_to must be/);
    // "Since the beginning": the plan's allowance narrows it to the last 365 days, a 200 as before.
    const since = await server.request('GET', '/api/v1/metrics/summary?date_from=0000-01-01', { apiKey: project.apiKey });
    expect(since.status, JSON.stringify(since.body)).toBe(200);
    expect(since.body).toMatchObject({ retention_clamped: true, retention_window_days: 365 });
    // The edges themselves are days like any other.
    for (const query of ['date_from=2000-01-01&date_to=2000-01-31', 'date_from=2099-12-01&date_to=2099-12-31']) {
      for (const operation of OPERATIONS) {
        const response = await server.request('GET', `/api/v1/metrics/${operation}?${query}${EXTRA[operation]}`, {
          apiKey: project.apiKey,
        });
        expect(response.status, `${operation}?${query}: ${JSON.stringify(response.body)}`).toBe(200);
      }
    }
  });
});

describe('concurrent merges in triangles (a→b, b→c, c→a)', () => {
  it('answer no 5xx, and leave no cycle and the right vote counts', async () => {
    const project = await createProject(server, { plan: 'team' });
    const TRIANGLES = 15;
    // Each item gets its creator's vote plus one shared voter per triangle (voted on all three),
    // so a merge that moves votes must fold duplicates into one.
    const triangles: { ids: string[]; voters: Set<string> }[] = [];
    for (let t = 0; t < TRIANGLES; t++) {
      const ids: string[] = [];
      const voters = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const creator = `creator-${t}-${i}`;
        const item = await createFeedback(server, project, { title: `item ${t}.${i}`, userId: creator });
        ids.push(item.id);
        voters.add(creator);
      }
      const shared = `shared-${t}`;
      for (const id of ids) {
        const vote = await server.request('POST', `/api/v1/feedbacks/${id}/votes`, { apiKey: project.apiKey, body: { userId: shared } });
        expect(vote.status).toBe(200);
      }
      voters.add(shared);
      triangles.push({ ids, voters });
    }

    const merge = (source: string, into: string) =>
      server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${source}/merge`, {
        bearer: project.account.adminToken,
        body: { intoId: into },
      });
    // All 45 merges at once: every triangle's three merges race with each other.
    const calls = triangles.flatMap(({ ids: [a, b, c] }) => [merge(a!, b!), merge(b!, c!), merge(c!, a!)]);
    const responses = await Promise.all(calls);
    const statuses = responses.map((r) => r.status);
    for (const response of responses) {
      expect([200, 409], JSON.stringify(response.body)).toContain(response.status);
    }
    // In each triangle at least one merge and at most two succeed (a third would close the cycle).
    for (let t = 0; t < TRIANGLES; t++) {
      const won = statuses.slice(3 * t, 3 * t + 3).filter((s) => s === 200).length;
      expect(won).toBeGreaterThanOrEqual(1);
      expect(won).toBeLessThanOrEqual(2);
    }

    const rows = await server.sql<{ id: string; merged_into_id: string | null; vote_count: number }[]>`
      select id, merged_into_id, vote_count from feedbacks where project_id = ${project.id}`;
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const { ids, voters } of triangles) {
      const roots = ids.filter((id) => byId.get(id)?.merged_into_id === null);
      // No cycle and no chain: exactly one root, and every merged item points straight at it.
      expect(roots).toHaveLength(1);
      const root = roots[0]!;
      for (const id of ids) {
        if (id !== root) expect(byId.get(id)?.merged_into_id).toBe(root);
      }
      // Every voter of the triangle holds exactly one vote, on the root; the counts agree.
      const votes = await server.sql<{ feedback_id: string; user_id: string }[]>`
        select feedback_id, user_id from votes where feedback_id in ${server.sql(ids)}`;
      expect(votes.every((v) => v.feedback_id === root)).toBe(true);
      expect(new Set(votes.map((v) => v.user_id))).toEqual(voters);
      expect(votes).toHaveLength(voters.size);
      expect(byId.get(root)?.vote_count).toBe(voters.size);
      for (const id of ids) if (id !== root) expect(byId.get(id)?.vote_count).toBe(0);
    }
  }, 120_000);
});

describe('requests Node refuses before the app sees them get the SPEC 7.1 body', () => {
  let http: Server;
  let base = '';
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server);
    http = createHttpServer(buildApp({ ...server.services, operatorToken: server.operatorToken }), server.services.config.http);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    stopWhenDone(async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    });
  });

  it('a URL over 16 KiB: 431 with { error: true, reason }', async () => {
    const response = await requestTo(base, 'GET', `/api/v1/feedbacks?sort=${'x'.repeat(17 * 1024)}`, { apiKey: project.apiKey });
    expect(response.status).toBe(431);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringMatching(/too large: at most 16 KiB/),
      message: expect.stringMatching(/too large: at most 16 KiB/),
    });
    // Far longer: the client is still sending when the answer leaves; it must not be reset away.
    const longer = await requestTo(base, 'GET', `/api/v1/feedbacks?sort=${'%F0%9F%98%80'.repeat(20_000)}`, { apiKey: project.apiKey });
    expect(longer.status).toBe(431);
    expect(longer.body).toMatchObject({ error: true });
    // The server still answers on a new connection.
    expect((await requestTo(base, 'GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).status).toBe(200);
  });

  it('an oversized request on a keep-alive connection that already served one: 431 with the body too', async () => {
    const { hostname, port } = new URL(base);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await vi.waitFor(() => expect(received).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\n\r\n\{.*\}$/), { timeout: 5_000 });
    received = '';
    socket.write(`GET /api/v1/feedbacks?sort=${'x'.repeat(40_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: true });
  });

  it('headers over 16 KiB: 431 too; malformed HTTP: 400, each with the JSON body', async () => {
    const headers = await rawExchange(base, `GET /api/v1/feedbacks HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`);
    expect(headers).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(JSON.parse(headers.slice(headers.indexOf('\r\n\r\n') + 4))).toMatchObject({ error: true });
    const malformed = await rawExchange(base, 'GET /api/v1/feedbacks HTTP/1.1\r\nHost x\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4))).toEqual({
      error: true,
      reason: 'malformed HTTP request',
      message: 'malformed HTTP request',
    });
  });
});

/** Sends raw bytes on a new connection; resolves with everything received until the server closes it. */
function rawExchange(base: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(bytes);
  });
}
