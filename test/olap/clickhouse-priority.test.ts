import { beforeAll, describe, expect, it } from 'vitest';
import { untilNoneRunning, untilRunning } from '../helpers/engine-queries.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * Embedded ClickHouse: interactive work (metrics, ingestion) is never queued behind operator
 * queries, and an operator query's limit counts its wait for a turn.
 */

const OPERATOR_TIMEOUT_MS = 4_000;
const server = useTestServer({ env: { OPERATOR_SQL_TIMEOUT_MS: String(OPERATOR_TIMEOUT_MS) } });
let project: TestProject;

beforeAll(async () => {
  project = await createProject(server, { plan: 'team' });
  const batch = await server.request('POST', '/api/v1/events/batch', {
    apiKey: project.apiKey,
    body: {
      events: [
        { eventName: 'seed', userId: 'u1' },
        { eventName: 'seed', userId: 'u2' },
      ],
    },
  });
  expect(batch.status).toBe(200);
});

/** Hashes ten billion numbers: far longer than any limit here, so it runs until the engine stops it. */
const HEAVY = 'SELECT count() AS n FROM numbers(10000000000) WHERE cityHash64(number) % 1000 = 7';
const HEAVY_WITH_PARAMS = 'SELECT count() AS n FROM numbers({rows:UInt64}) WHERE cityHash64(number) % 1000 = {k:UInt16}';
/** What both heavy queries' text holds, as system.processes shows it. */
const HEAVY_MARK = 'cityHash64(number)';

const operatorSql = (query: string, params?: Record<string, unknown>) =>
  server.request('POST', '/api/v1/admin/sql', { bearer: server.operatorToken, body: { query, ...(params ? { params } : {}) } });

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

const today = () => new Date().toISOString().slice(0, 10);

async function interactiveLatencies(): Promise<{ metrics: number[]; tracks: number[] }> {
  const metrics: number[] = [];
  const tracks: number[] = [];
  for (let i = 0; i < 3; i++) {
    const m = await timed(() => server.request('GET', `/api/v1/metrics/summary?date_from=${today()}`, { apiKey: project.apiKey }));
    expect(m.value.status, JSON.stringify(m.value.body)).toBe(200);
    metrics.push(m.ms);
    const t = await timed(() =>
      server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: { eventName: 'during_sql', userId: `u${i}` } }),
    );
    expect(t.value.status, JSON.stringify(t.value.body)).toBe(200);
    tracks.push(t.ms);
  }
  return { metrics, tracks };
}

describe('embedded ClickHouse: interactive work goes first', () => {
  it.each([
    ['without parameters', HEAVY, undefined],
    ['with parameters', HEAVY_WITH_PARAMS, { rows: 10_000_000_000, k: 7 }],
  ])('while an operator query %s runs, metrics and /events/track each answer within 1 s', async (_, query, params) => {
    const operator = timed(() => operatorSql(query, params));
    await untilRunning(server, HEAVY_MARK);
    const { metrics, tracks } = await interactiveLatencies();
    if (process.env.SHOW_LATENCIES) console.log({ query, metrics, tracks });
    expect(Math.max(...metrics), `metrics ms: ${metrics.map(Math.round).join(', ')}`).toBeLessThan(1_000);
    expect(Math.max(...tracks), `track ms: ${tracks.map(Math.round).join(', ')}`).toBeLessThan(1_000);
    const done = await operator;
    // The operator query itself was stopped at its limit, as a refusal.
    expect(done.value.status, JSON.stringify(done.value.body)).toBe(400);
    expect(done.value.body.reason).toMatch(/^query: .*(Timeout|timed out)/i);
    expect(done.ms).toBeLessThan(OPERATOR_TIMEOUT_MS + 1_500);
  });

  it('an operator query’s limit counts its wait: the second of two heavy queries ends by its own deadline', async () => {
    const first = timed(() => operatorSql(HEAVY));
    await untilRunning(server, HEAVY_MARK);
    const second = await timed(() => operatorSql(HEAVY));
    // Either no turn came in time (429 with Retry-After), or it got the few milliseconds left
    // of its limit and the engine stopped it (400): never a full limit after the wait.
    expect([400, 429], JSON.stringify(second.value.body)).toContain(second.value.status);
    expect(second.value.body).toEqual({
      error: true,
      reason: expect.stringMatching(/^query: .*(Timeout|timed out|time limit)/i),
      message: expect.stringMatching(/^query: .*(Timeout|timed out|time limit)/i),
    });
    if (second.value.status === 429) expect(Number(second.value.headers.get('retry-after'))).toBeGreaterThan(0);
    // Not 2 × the limit: the wait was part of its limit.
    expect(second.ms).toBeLessThan(OPERATOR_TIMEOUT_MS + 1_000);
    expect((await first).value.status).toBe(400);
  });

  it('more operator queries than may wait are refused at once with 429', async () => {
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 7 }, () => operatorSql(HEAVY).then((r) => ({ status: r.status, ms: performance.now() - started }))),
    );
    const refusedAtOnce = answers.filter((a) => a.status === 429 && a.ms < 1_000);
    expect(refusedAtOnce.length, JSON.stringify(answers)).toBeGreaterThanOrEqual(2);
  });

  it('after all that, a light operator query answers normally', async () => {
    // The earlier heavy queries hold their turns until the engine has stopped them.
    await untilNoneRunning(server, HEAVY_MARK);
    const r = await operatorSql('SELECT 1 AS one');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([{ one: 1 }]);
  });
});
