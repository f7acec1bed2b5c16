import { monitorEventLoopDelay } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Issue 20, part 4: a project query within the 10,000-row cap returned 129 MB of JSON
 * (`range(2000)` per row). While it ran, another account's GET /feedbacks took 2.1–3.9 s, one
 * request failed with ECONNRESET, and the process grew to about 2.2 GB. The result is now bounded
 * in bytes (a 400 past 16 MiB) and its rows are never parsed on the event loop.
 */

const HUGE = 'SELECT range(toUInt64(2000)) AS a FROM numbers(10000)';
/** The target of the issue: other tenants' requests while two such queries run. */
const P99_TARGET_MS = 500;

const server = useTestServer({ workers: false, env: { PROJECT_SQL_TIMEOUT_MS: '60000' } });
beforeAll(async () => {
  // A generous time limit, so that on a loaded machine the byte bound, not the clock, stops the query.
});

/** p50, p99 and max of latencies in ms, rounded to 0.1 ms. */
function summary(latencies: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => Math.round((sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)] ?? 0) * 10) / 10;
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

const projectSql = (project: TestProject, query: string) =>
  server.request('POST', `/api/v1/projects/${project.id}/sql`, { bearer: project.account.adminToken, body: { query } });

describe('a project query whose result is huge', () => {
  it(`is a 400 past 16 MiB, and other accounts' requests stay under ${P99_TARGET_MS} ms p99 while two run`, async () => {
    const [first, second, bystander] = await Promise.all([
      createProject(server, { plan: 'pro' }),
      createProject(server, { plan: 'pro' }),
      createProject(server, { plan: 'pro' }),
    ]);
    for (let i = 0; i < 3; i++) await createFeedback(server, bystander);

    let running = true;
    const bystanderLoop = async (latencies: number[], stopAfter = Number.POSITIVE_INFINITY) => {
      while (running && latencies.length < stopAfter) {
        const started = performance.now();
        const response = await server.request('GET', '/api/v1/feedbacks', { apiKey: bystander.apiKey });
        latencies.push(performance.now() - started);
        expect(response.status).toBe(200);
        expect(response.body).toHaveLength(3);
      }
    };
    // The same requests without the queries first: on a shared CI machine the baseline itself varies.
    const baseline: number[] = [];
    await bystanderLoop(baseline, 200);
    const latencies: number[] = [];
    const loop = bystanderLoop(latencies);
    const eventLoop = monitorEventLoopDelay({ resolution: 10 });
    eventLoop.enable();
    const started = performance.now();
    const answers = await Promise.all([projectSql(first, HUGE), projectSql(second, HUGE)]);
    const queriesMs = performance.now() - started;
    eventLoop.disable();
    running = false;
    await loop;

    // One stops at the byte bound. The other waits for its turn within the same time limit, so on
    // a starved machine its clock may run out first: a 400 either way, never rows.
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body).toEqual({
        error: true,
        reason: expect.stringMatching(/^query: (the result is larger than 16 MiB|timed out)/),
        message: expect.stringMatching(/^query: (the result is larger than 16 MiB|timed out)/),
      });
    }
    expect(answers.some((answer) => /^query: the result is larger than 16 MiB/.test(answer.body.reason))).toBe(true);
    const during = summary(latencies);
    const before = summary(baseline);
    const delay = (q: number) => (eventLoop.percentile(q) / 1e6).toFixed(1);
    console.info(
      `two huge project queries: ${Math.round(queriesMs)} ms; bystander GET /feedbacks without them: p50 ${before.p50} ms, ` +
        `p99 ${before.p99} ms; while they ran: ${latencies.length} requests, p50 ${during.p50} ms, p99 ${during.p99} ms, ` +
        `max ${during.max} ms; event-loop delay p99 ${delay(99)} ms, max ${(eventLoop.max / 1e6).toFixed(1)} ms; ` +
        `rss ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MB`,
    );
    expect(latencies.length).toBeGreaterThan(10);
    // The target, or twice the machine's own p99 when the machine alone is slower than half of it.
    expect(during.p99).toBeLessThan(Math.max(P99_TARGET_MS, 2 * before.p99));
  }, 180_000);

  it('a large result under the bound arrives whole and exact, rows cut at 10,000', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const r = await projectSql(project, "SELECT number AS n, repeat('é', 100) AS s, [number, 1] AS pair FROM numbers(25000)");
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.columns).toEqual([
      { name: 'n', type: 'UInt64' },
      { name: 's', type: 'String' },
      { name: 'pair', type: 'Array(UInt64)' },
    ]);
    expect(r.body).toMatchObject({ row_count: 10_000, truncated: true });
    expect(r.body.rows).toHaveLength(10_000);
    expect(r.body.rows[0]).toEqual({ n: '0', s: 'é'.repeat(100), pair: ['0', '1'] });
    expect(r.body.rows[9_999]).toEqual({ n: '9999', s: 'é'.repeat(100), pair: ['9999', '1'] });
    const empty = await projectSql(project, 'SELECT 1 AS one WHERE 0');
    expect(empty.body).toMatchObject({ columns: [{ name: 'one', type: 'UInt8' }], rows: [], row_count: 0, truncated: false });
  });
});
