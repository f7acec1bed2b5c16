import { beforeAll, describe, expect, it } from 'vitest';
import { startTelemetryServer } from '../../src/runtime/telemetry-server.js';
import { createFeedback, createProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

async function scrape(port: number): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of one sample line, e.g. metric{a="b"} 3. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const [series, value] = line.split(/ (?=[^ ]+$)/);
    if (!series || (series !== name && !series.startsWith(`${name}{`))) continue;
    if (wanted.every((pair) => series.includes(pair))) return Number(value);
  }
  return undefined;
}

describe.each([
  { mode: 'embedded', redis: false },
  { mode: 'BullMQ on Redis', redis: true },
])('Prometheus metrics on their own port, $mode', ({ redis }) => {
  const server = useTestServer({ redis });
  let telemetryPort: number;
  let closeMetrics: () => Promise<void>;
  beforeAll(async () => {
    const started = await startTelemetryServer(server.services.telemetry.registry, 0, '127.0.0.1');
    telemetryPort = started.port;
    closeMetrics = started.close;
    stopWhenDone(async () => {
      await closeMetrics?.();
    });
  });

  it.skipIf(redis && !withRedis)('counts and times requests per route pattern and status', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, project);
    for (let i = 0; i < 3; i++) await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: project.apiKey });
    await server.request('GET', '/api/v1/feedbacks/00000000-0000-4000-8000-000000000000', { apiKey: project.apiKey });
    await server.request('GET', '/no/such/route');
    const text = await scrape(telemetryPort);
    const route = '/api/v1/feedbacks/:id';
    expect(sample(text, 'feedback_http_requests_total', { method: 'GET', route, status: '200' })).toBe(3);
    expect(sample(text, 'feedback_http_requests_total', { method: 'GET', route, status: '404' })).toBe(1);
    expect(sample(text, 'feedback_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'feedback_http_request_duration_seconds_count', { method: 'GET', route, status: '200' })).toBe(3);
    expect(text).toContain('process_cpu_seconds_total');
  });

  it.skipIf(redis && !withRedis)('reports ingestion batch sizes, ClickHouse insert latency and the outbox backlog', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const before = sample(await scrape(telemetryPort), 'feedback_clickhouse_insert_rows_sum', { table: 'events' }) ?? 0;
    const events = Array.from({ length: 250 }, (_, i) => ({ eventName: 'tap', userId: `u${i}` }));
    expect((await server.request('POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events } })).status).toBe(200);
    await createFeedback(server, project);
    await eventually('events and facts written', 15_000, async () => {
      const text = await scrape(telemetryPort);
      return (
        (sample(text, 'feedback_clickhouse_insert_rows_sum', { table: 'events' }) ?? 0) >= before + 250 &&
        (sample(text, 'feedback_clickhouse_insert_rows_count', { table: 'facts' }) ?? 0) >= 1 &&
        sample(text, 'feedback_outbox_pending_facts') === 0
      );
    });
    const text = await scrape(telemetryPort);
    expect(sample(text, 'feedback_clickhouse_insert_duration_seconds_count', { table: 'events', outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'feedback_outbox_lag_seconds')).toBe(0);
    if (redis) {
      expect(sample(text, 'feedback_queue_jobs', { state: 'failed' })).toBe(0);
      expect(sample(text, 'feedback_queue_oldest_wait_seconds')).toBeGreaterThanOrEqual(0);
    }
  });

  it.skipIf(redis && !withRedis)('answers 404 for anything but GET /metrics', async () => {
    const response = await fetch(`http://127.0.0.1:${telemetryPort}/other`);
    expect(response.status).toBe(404);
  });
});
