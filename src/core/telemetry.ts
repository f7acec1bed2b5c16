import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The Prometheus metrics of one process, in a registry of its own (tests build several apps in
 * one process). Served on METRICS_PORT, apart from the API, so scrapes never meet rate limits or
 * auth and the API port exposes nothing internal.
 */
export type Telemetry = ReturnType<typeof createTelemetry>;

export function createTelemetry() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'feedback_http_requests_total',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'feedback_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    insertRows: new Histogram({
      name: 'feedback_clickhouse_insert_rows',
      help: 'Rows per ClickHouse batch insert (ingestion batch size), by table',
      labelNames: ['table'] as const,
      buckets: [1, 10, 100, 500, 1_000, 5_000, 10_000, 50_000, 100_000],
      registers: [registry],
    }),
    insertSeconds: new Histogram({
      name: 'feedback_clickhouse_insert_duration_seconds',
      help: 'ClickHouse batch insert latency, by table and outcome',
      labelNames: ['table', 'outcome'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    deadLetters: new Counter({
      name: 'feedback_dead_letters_total',
      help: 'Rows ClickHouse refused for their data, isolated from their batch and kept in dead_letters, by kind (event, fact)',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
  };
}

/** Times one ClickHouse insert of `rows` rows into `table`. */
export async function observeInsert<T>(
  telemetry: Telemetry | undefined,
  table: string,
  rows: number,
  insert: () => Promise<T>,
): Promise<T> {
  if (!telemetry) return insert();
  const stop = telemetry.insertSeconds.startTimer({ table });
  try {
    const result = await insert();
    stop({ outcome: 'ok' });
    telemetry.insertRows.observe({ table }, rows);
    return result;
  } catch (error) {
    stop({ outcome: 'error' });
    throw error;
  }
}

/** A gauge whose value is read when Prometheus scrapes (queue depth, outbox lag). */
export function scrapedGauge(
  telemetry: Telemetry,
  spec: { name: string; help: string; labelNames?: string[] },
  read: (set: (value: number, labels?: Record<string, string>) => void) => Promise<void>,
): Gauge {
  return new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [telemetry.registry],
    async collect() {
      try {
        await read((value, labels) => (labels ? this.set(labels, value) : this.set(value)));
      } catch {
        // A dependency that cannot answer leaves the last value; /readyz reports the outage.
      }
    },
  });
}
