/**
 * The service under benchmark, forked by bench/ingest.ts: wired exactly as `npm start`
 * (src/main.ts) wires it — createAppContext, migrations, startWorkers, buildApp — from the
 * environment the parent gives it (DATABASE_URL of a fresh database, a temporary DATA_DIR,
 * LOG_LEVEL=silent, and for BullMQ mode REDIS_URL with a random QUEUE_PREFIX).
 *
 * chDB binds its data directory to this process, so the parent asks *this* process, over the IPC
 * channel, to count rows in ClickHouse and to run the raw-insert baseline on the same engine.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';
import { uuidv7 } from 'uuidv7';
import { buildApp } from '../src/api/app.js';
import { apiRunsWorkers, loadConfig } from '../src/core/config.js';
import type { IngestEvent } from '../src/core/event.js';
import type { EventSink } from '../src/ingest/event-sink.js';
import { insertEvents } from '../src/olap/tables/events.table.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';
import { startWorkers } from '../src/workers/runner.js';
import type { ControlMessage, ControlReply, LoopDelay, RawInsertResult, ReadyMessage, SdkEvent, WriterStats } from './protocol.js';

if (!process.send) throw new Error('bench/server.ts is forked by bench/ingest.ts (it needs an IPC channel)');
const send = (message: ControlReply | ReadyMessage) => process.send?.(message);

const config = loadConfig(process.env);
const services = await createServices(config);
await migrateAll(services);
const workers = apiRunsWorkers(config) ? startWorkers(services) : undefined;
const operatorToken = config.operatorToken;
if (!operatorToken) throw new Error('the benchmark passes OPERATOR_TOKEN');
const lifecycle = { stopping: false };
/** The real sink, or (op 'sink', analysis only) one that stores nothing and answers at once. */
let noopSink = false;
const eventSink: EventSink = {
  submit: (events) => (noopSink ? Promise.resolve(events) : services.eventSink.submit(events)),
  close: () => services.eventSink.close(),
};
// Counts the pipeline's inserts (op 'writes'): the raw baseline is timed at the size they reach.
const writerStats = { writes: 0, events: 0 };
const write = services.eventWriter.write.bind(services.eventWriter);
// The embedded log's shipper writes through writeRowLines (issue 31), which falls back to write()
// for a range it cannot insert as bytes: that write is the same insert, counted once.
let inRowLines = 0;
services.eventWriter.write = (events, token, writeOptions) => {
  if (inRowLines === 0) {
    writerStats.writes++;
    writerStats.events += events.length;
  }
  return write(events, token, writeOptions);
};
const writeRowLines = services.eventWriter.writeRowLines?.bind(services.eventWriter);
if (writeRowLines) {
  services.eventWriter.writeRowLines = async (batch, token, writeOptions) => {
    writerStats.writes++;
    writerStats.events += batch.count;
    inRowLines++;
    try {
      return await writeRowLines(batch, token, writeOptions);
    } finally {
      inRowLines--;
    }
  };
}
const app = buildApp({ ...services, eventSink, operatorToken, lifecycle });
const server: Server = app.listen(config.port, config.host);
await new Promise<void>((resolve, reject) => {
  server.once('listening', resolve);
  server.once('error', reject);
});

/** How late the event loop runs timers: high values mean requests wait behind other work. */
const LOOP_RESOLUTION_MS = 5;
const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loopDelay.enable();
// GC pauses of the main thread, summed between 'loop' resets: the GC time per event (issue 31).
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

async function count(projectId: string): Promise<number> {
  const result = await services.clickhouse.query({
    query: 'SELECT count() AS n FROM events WHERE project_id = {projectId:UUID}',
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string | number }>();
  return Number(row?.n ?? 0);
}

async function visibleIds(projectId: string): Promise<string[]> {
  const result = await services.clickhouse.query({
    query: 'SELECT toString(event_id) AS id FROM events WHERE project_id = {projectId:UUID}',
    query_params: { projectId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ id: string }>()).map((row) => row.id);
}

async function quiesce(timeoutMs: number): Promise<{ waitedMs: number; mergesLeft: number }> {
  const started = performance.now();
  for (;;) {
    const result = await services.clickhouse.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' });
    const [row] = await result.json<{ n: string | number }>();
    const merges = Number(row?.n ?? 0);
    const waitedMs = performance.now() - started;
    if (merges === 0 || waitedMs >= timeoutMs) return { waitedMs, mergesLeft: merges };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The rows the API would build from these SDK events (events.routes.ts, toIngestEvent). */
function rowsFor(projectId: string, templates: SdkEvent[][], total: number): IngestEvent[] {
  const rows: IngestEvent[] = [];
  const receivedAt = new Date().toISOString();
  for (let t = 0; rows.length < total; t++) {
    for (const event of templates[t % templates.length] ?? []) {
      if (rows.length >= total) break;
      rows.push({
        project_id: projectId,
        event_id: event.eventId ?? uuidv7(),
        event_name: event.eventName,
        user_id: event.userId,
        properties: event.properties ?? null,
        created_at: event.timestamp ? new Date(event.timestamp).toISOString() : receivedAt,
        received_at: receivedAt,
        id_from_client: event.eventId !== undefined,
      });
    }
  }
  return rows;
}

async function rawInsert(request: Extract<ControlMessage, { op: 'rawInsert' }>): Promise<RawInsertResult> {
  const rows = rowsFor(request.projectId, request.templates, request.total);
  const batches: IngestEvent[][] = [];
  for (let i = 0; i < rows.length; i += request.batchSize) batches.push(rows.slice(i, i + request.batchSize));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: request.concurrency }, async () => {
      while (next < batches.length) {
        const batch = batches[next++] as IngestEvent[];
        await insertEvents(services.clickhouse, batch, `bench-raw:${uuidv7()}`);
      }
    }),
  );
  const ms = performance.now() - started;
  return { rows: rows.length, batches: batches.length, ms, visible: await count(request.projectId) };
}

let shuttingDown: Promise<void> | undefined;
function shutdown(): Promise<void> {
  shuttingDown ??= (async () => {
    lifecycle.stopping = true;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await services.eventSink.close();
    await workers?.stop();
    if (services.queue && services.redis) {
      await services.queue.obliterate({ force: true }).catch(() => undefined);
      await deleteKeys(`${config.queuePrefix}:*`);
    }
    await services.close();
  })();
  return shuttingDown;
}

async function deleteKeys(pattern: string): Promise<void> {
  const redis = services.redis;
  if (!redis) return;
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = nextCursor;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

async function handle(message: ControlMessage): Promise<unknown> {
  switch (message.op) {
    case 'count':
      return count(message.projectId);
    case 'ids':
      return visibleIds(message.projectId);
    case 'loop': {
      // The histogram measures timer gaps of LOOP_RESOLUTION_MS; what is beyond that is delay.
      const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
      const delay = { p50Ms: late(loopDelay.percentile(50)), p99Ms: late(loopDelay.percentile(99)), maxMs: late(loopDelay.max), gcMs };
      if (message.reset) {
        loopDelay.reset();
        gcMs = 0;
      }
      return delay satisfies LoopDelay;
    }
    case 'quiesce':
      return quiesce(message.timeoutMs);
    case 'rawInsert':
      return rawInsert(message);
    case 'sink':
      noopSink = message.noop;
      return null;
    case 'writes': {
      const stats = { ...writerStats } satisfies WriterStats;
      if (message.reset) Object.assign(writerStats, { writes: 0, events: 0 });
      return stats;
    }
    case 'shutdown':
      await shutdown();
      return null;
  }
}

process.on('message', (message: ControlMessage) => {
  handle(message).then(
    (result) => {
      send({ id: message.id, ok: true, result });
      if (message.op === 'shutdown') process.disconnect();
    },
    (error: unknown) => send({ id: message.id, ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
// The parent died or let go: never linger holding the chDB directory.
process.on('disconnect', () => {
  void shutdown().finally(() => process.exit(0));
});

send({ ready: true, port: (server.address() as AddressInfo).port });
