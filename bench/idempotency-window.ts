/**
 * The idempotency proof of issue 22, shared by `npm run bench:idempotency` (full scale) and
 * test/idempotency-window.test.ts (small scale):
 *
 * - window: `idsPerSecond` new eventIds a second over the whole window (the 7 buckets of
 *   id-filter.ts, 28 hours) with the clock advanced, not waited for; reports the bytes per
 *   remembered id and the peak memory (the process's RSS, or Redis's used_memory), the time a
 *   restart takes to load the full window, the filter's false-hit rate on new ids, and that a
 *   retry of sampled ids from every hour of the window is answered with the stored event and
 *   stored once, through the real sinks over real chDB (and Redis).
 *   The bulk of the ids go straight into the filters as hashes (uniform 64-bit values, which is
 *   what idHash gives) so that a billion ids take minutes; the sampled ids, and every checked
 *   retry and new id, go through the real key hashing and the sinks' own code.
 * - cost: CPU per event of the writer (the duplicate lookup of client eventIds plus the insert,
 *   the part that grew with the rows stored), on an empty table and then with `rows` rows
 *   already stored (INSERT … SELECT FROM numbers()), spread over the 60 days before the window.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { eventKey, type IngestEvent } from '../src/core/event.js';
import { createLogger } from '../src/core/logger.js';
import {
  BITS_SET,
  BLOCK_BITS,
  bitsOf,
  blockOf,
  blocksPerBucket,
  bucketOf,
  ID_BUCKET_MS,
  ID_BUCKETS,
  ID_LOOKBACK_MS,
  IDEMPOTENCY_WINDOW_HOURS,
  idHash,
} from '../src/ingest/id-filter.js';
import { LogEventSink } from '../src/ingest/log/log-sink.js';
import { ShippedIdFilter } from '../src/ingest/log/shipped-id-filter.js';
import { createIngestQueue } from '../src/ingest/queue/ingest.queue.js';
import { QueueEventSink } from '../src/ingest/queue/queue-sink.js';
import { bucketExpiry, RedisIdClaims, releaseClaims } from '../src/ingest/queue/redis-id-claims.js';
import type { DeadLetterStore } from '../src/ingest/writer/dead-letters.js';
import { EventWriter } from '../src/ingest/writer/event-writer.js';
import type { ClickHouseClient } from '../src/olap/clickhouse.js';
import { findStoredEvents, insertEvents } from '../src/olap/tables/events.table.js';

export type WindowReport = {
  mode: 'embedded' | 'bullmq';
  idsPerSecond: number;
  simulatedHours: number;
  /** Ids the filters remember at the end (those of the window's buckets). */
  rememberedIds: number;
  /** Bytes the memory of ids takes (the filters in the process, or Redis's used_memory growth). */
  memoryBytes: number;
  bytesPerId: number;
  /** Embedded: bytes of the filters and journals on disk. */
  diskBytes?: number;
  /** Peak RSS of this process (embedded), or Redis's peak used_memory during the run (bullmq). */
  peakBytes: number;
  fillSeconds: number;
  /** Embedded: opening the ingest log sink (the service's start-up code) with the full window. */
  restartSeconds?: number;
  /** Its CPU time: on a busy shared machine the wall time mostly measures the wait for a core. */
  restartCpuSeconds?: number;
  /** Embedded: this process's RSS once the restarted sink is open (the fill's own filter released). */
  rssAfterRestartBytes?: number;
  /** Share of never-seen ids the filter answers "maybe" for (each costs one ClickHouse lookup). */
  falseHitRate: number;
  sampled: number;
  /** Sampled retries answered with the stored event (not the retry's own). */
  answeredDuplicate: number;
  /** Sampled ids found exactly once in ClickHouse after the retries and a ship/queue drain. */
  storedOnce: number;
  newIdsAccepted: number;
};

const noDeadLetters: DeadLetterStore = { record: async () => undefined };
/** Sampled ids, each hour of the guaranteed window (the filters may remember older ones too). */
const SAMPLES_PER_HOUR = 10;
const WINDOW_MS = IDEMPOTENCY_WINDOW_HOURS * 3_600_000;
const STEP_SECONDS = 60;

/** xorshift128: uniform 32-bit values, fast enough for a billion hashes. */
function random32(seed: number): () => number {
  let x = seed | 0 || 1;
  let y = 362436069;
  let z = 521288629;
  let w = 88675123;
  return () => {
    const t = x ^ (x << 11);
    x = y;
    y = z;
    z = w;
    w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return w;
  };
}

function sampleEvent(projectId: string, at: number): IngestEvent {
  const iso = new Date(at).toISOString();
  return {
    project_id: projectId,
    event_id: randomUUID(),
    event_name: 'sampled',
    user_id: 'u',
    properties: { at: iso },
    created_at: iso,
    received_at: iso,
    id_from_client: true,
  };
}

/** The retry of an event: same client eventId, another payload and times (so the answer tells which it is). */
function retryOf(event: IngestEvent, now: number): IngestEvent {
  const iso = new Date(now).toISOString();
  return { ...event, event_name: 'retried', properties: { retry: true }, created_at: iso, received_at: iso };
}

/** Simulated time: from `hours` ago until now, in STEP_SECONDS steps. */
function* timeline(hours: number, end: number): Generator<number> {
  for (let t = end - hours * 3_600_000; t < end; t += STEP_SECONDS * 1000) yield t;
}

async function countStored(clickhouse: ClickHouseClient, projectId: string, ids: string[]): Promise<Map<string, number>> {
  const result = await clickhouse.query({
    query: `SELECT toString(event_id) AS id, count() AS n FROM events
            WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)} GROUP BY event_id`,
    query_params: { p: projectId, ids },
    format: 'JSONEachRow',
  });
  return new Map((await result.json<{ id: string; n: string }>()).map((row) => [row.id, Number(row.n)]));
}

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function falseHitRate(mayContain: (key: string) => boolean, projectId: string, count: number): number {
  let hits = 0;
  for (let i = 0; i < count; i++) if (mayContain(eventKey(projectId, randomUUID()))) hits++;
  return hits / count;
}

/** Embedded mode: the ingest log's filter, filled over the window, then the real sink restarted on it. */
export async function simulateEmbeddedWindow(options: {
  dataDir: string;
  clickhouse: ClickHouseClient;
  idsPerSecond: number;
  hours?: number;
  falseHitProbes?: number;
}): Promise<WindowReport> {
  const hours = options.hours ?? (ID_BUCKETS * ID_BUCKET_MS) / 3_600_000;
  const logDir = path.join(options.dataDir, 'ingest-log');
  const idsDir = path.join(logDir, 'client-ids');
  await mkdir(idsDir, { recursive: true });
  const projectId = randomUUID();
  const end = Date.now();
  const blocks = blocksPerBucket(options.idsPerSecond);
  const next = random32(42);
  const perStep = options.idsPerSecond * STEP_SECONDS;
  const hashes = new Uint32Array(perStep * 2);
  const samples: IngestEvent[] = [];
  const perBucket = new Map<number, number>();
  const started = performance.now();
  let filter: ShippedIdFilter | undefined = await ShippedIdFilter.open(idsDir, blocks, end - hours * 3_600_000);
  for (const t of timeline(hours, end)) {
    for (let i = 0; i < hashes.length; i++) hashes[i] = next();
    // Samples: real keys through the real hash, stored in ClickHouse at their simulated time.
    if (t % 3_600_000 < STEP_SECONDS * 1000 && t >= end - WINDOW_MS) {
      for (let s = 0; s < SAMPLES_PER_HOUR; s++) {
        const event = sampleEvent(projectId, t);
        samples.push(event);
        const [a, b] = idHash(eventKey(projectId, event.event_id));
        hashes[2 * s] = a;
        hashes[2 * s + 1] = b;
      }
    }
    await filter.add(hashes, t);
    perBucket.set(bucketOf(t), (perBucket.get(bucketOf(t)) ?? 0) + perStep);
  }
  const fillSeconds = (performance.now() - started) / 1000;
  await insertEvents(options.clickhouse, samples, `bench:samples:${randomUUID()}`);
  const memoryBytes = filter.bytes;
  let rememberedIds = 0;
  for (const [bucket, ids] of perBucket) if (bucket > bucketOf(end) - ID_BUCKETS) rememberedIds += ids;
  const diskBytes = await directoryBytes(idsDir);
  // Through a function's parameter, so no reference to the fill's filters outlives the probe
  // (the restart below must not be measured with them still in memory).
  const probeFilter = (filled: ShippedIdFilter) =>
    falseHitRate(
      (key) => {
        const [a, b] = idHash(key);
        return filled.mayContain(a, b);
      },
      projectId,
      options.falseHitProbes ?? 100_000,
    );
  const rate = probeFilter(filter);
  filter = undefined;
  (globalThis as { gc?: () => void }).gc?.();

  // A restart: the service's own start-up code on the full window.
  const writer = new EventWriter(options.clickhouse, noDeadLetters);
  const opened = performance.now();
  const openedCpu = process.cpuUsage();
  const sink = await LogEventSink.open({
    dir: logDir,
    maxBytes: 64 * 1024 * 1024,
    shutdownShipMs: 10_000,
    writer,
    clickhouse: options.clickhouse,
    logger: createLogger('silent'),
    idsPerSecond: options.idsPerSecond,
  });
  const restartSeconds = (performance.now() - opened) / 1000;
  const restartCpu = process.cpuUsage(openedCpu);
  (globalThis as { gc?: () => void }).gc?.();
  const rssAfterRestartBytes = process.memoryUsage().rss;
  sink.start();
  const retries = samples.map((event) => retryOf(event, Date.now()));
  const fresh = Array.from({ length: 100 }, () => sampleEvent(projectId, Date.now()));
  const answers = await sink.submit([...retries, ...fresh]);
  const answeredDuplicate = retries.filter((retry, i) => answers[i] !== retry && answers[i]?.created_at === samples[i]?.created_at).length;
  const ids = [...samples, ...fresh].map((event) => event.event_id);
  await waitFor(async () => sink.unshippedBytes === 0, 60_000);
  const counts = await countStored(options.clickhouse, projectId, ids);
  await sink.close();
  return {
    mode: 'embedded',
    idsPerSecond: options.idsPerSecond,
    simulatedHours: hours,
    rememberedIds,
    memoryBytes,
    bytesPerId: memoryBytes / rememberedIds,
    diskBytes,
    peakBytes: process.resourceUsage().maxRSS * 1024,
    fillSeconds,
    restartSeconds,
    restartCpuSeconds: (restartCpu.user + restartCpu.system) / 1e6,
    rssAfterRestartBytes,
    falseHitRate: rate,
    sampled: samples.length,
    answeredDuplicate,
    storedOnce: samples.filter((event) => counts.get(event.event_id) === 1).length,
    newIdsAccepted: fresh.filter((event, i) => answers[retries.length + i] === event && counts.get(event.event_id) === 1).length,
  };
}

async function directoryBytes(dir: string): Promise<number> {
  const { readdir, stat } = await import('node:fs/promises');
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(path.join(dir, name))).size;
  return total;
}

async function redisMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
}

/**
 * BullMQ mode: the Redis filter filled over the window (bulk ids written as the bitmaps the
 * claim script would build, with SETRANGE; sampled ids through the claim script itself, at their
 * simulated time), then retries through the real QueueEventSink.
 */
export async function simulateRedisWindow(options: {
  redis: Redis;
  prefix: string;
  clickhouse: ClickHouseClient;
  idsPerSecond: number;
  hours?: number;
  falseHitProbes?: number;
}): Promise<WindowReport> {
  const { redis, prefix } = options;
  const hours = options.hours ?? (ID_BUCKETS * ID_BUCKET_MS) / 3_600_000;
  const claims = new RedisIdClaims(redis, prefix, options.idsPerSecond);
  const { blocks, shards } = claims.layout;
  const blocksPerShard = Math.ceil(blocks / shards);
  const projectId = randomUUID();
  const end = Date.now();
  const before = await redisMemory(redis);
  let peak = before;
  const next = random32(7);
  const bits = new Uint16Array(BITS_SET);
  const samples: IngestEvent[] = [];
  let rememberedIds = 0;
  const started = performance.now();
  const times = [...timeline(hours, end)];
  for (let bucket = bucketOf(times[0] as number); bucket <= bucketOf(end); bucket++) {
    const inBucket = times.filter((t) => bucketOf(t) === bucket);
    const ids = inBucket.length * STEP_SECONDS * options.idsPerSecond;
    if (bucket > bucketOf(end) - ID_BUCKETS) rememberedIds += ids;
    const maps = Array.from({ length: shards }, () => Buffer.alloc(blocksPerShard * (BLOCK_BITS / 8)));
    for (let i = 0; i < ids; i++) {
      const a = next();
      const block = blockOf(a, blocks);
      const map = maps[block % shards] as Buffer;
      const base = Math.floor(block / shards) * BLOCK_BITS;
      bitsOf(a, next(), bits);
      for (let j = 0; j < BITS_SET; j++) {
        const offset = base + (bits[j] as number);
        map[offset >>> 3] = (map[offset >>> 3] as number) | (0x80 >>> (offset & 7));
      }
    }
    for (const [shard, map] of maps.entries()) {
      const key = claims.shardKey(bucket, shard);
      const chunk = 32 * 1024 * 1024;
      for (let offset = 0; offset < map.length; offset += chunk) await redis.setrange(key, offset, map.subarray(offset, offset + chunk));
      await redis.expireat(key, bucketExpiry(bucket));
    }
    // The sampled ids of each hour of this bucket, claimed at their time, stored, then released as the worker does.
    for (const t of inBucket.filter((time) => time % 3_600_000 < STEP_SECONDS * 1000 && time >= end - WINDOW_MS)) {
      const events = Array.from({ length: SAMPLES_PER_HOUR }, () => sampleEvent(projectId, t));
      // Claimed as the sink does a new id (after a rare false hit it claims without the check).
      const outcomes = await claims.claim(events, false, t);
      if (outcomes.some((outcome) => outcome.kind !== 'claimed')) throw new Error('a new sampled id was not claimed');
      await releaseClaims(redis, prefix, events);
      samples.push(...events);
    }
    peak = Math.max(peak, await redisMemory(redis));
  }
  const fillSeconds = (performance.now() - started) / 1000;
  await insertEvents(options.clickhouse, samples, `bench:samples:${randomUUID()}`);
  // The filter's own keys (MEMORY USAGE), exact whatever else the shared Redis holds; the growth
  // of used_memory is reported as the peak.
  let memoryBytes = 0;
  for (const key of await redis.keys(`${claims.shardKey(0, 0).replace(/0:0$/, '')}*`)) {
    memoryBytes += Number((await redis.memory('USAGE', key)) ?? 0);
  }

  // Probe the filter with new keys through the claim script (check only: "maybe" or claimed).
  const probes = Array.from({ length: options.falseHitProbes ?? 20_000 }, () => sampleEvent(projectId, end));
  let maybe = 0;
  for (let i = 0; i < probes.length; i += 500) {
    const chunk = probes.slice(i, i + 500);
    maybe += (await claims.claim(chunk, true)).filter((outcome) => outcome.kind === 'maybe-stored').length;
    await releaseClaims(redis, prefix, chunk);
  }

  const queue = createIngestQueue(redis, prefix);
  const sink = new QueueEventSink(queue, redis, { keyPrefix: prefix, clickhouse: options.clickhouse, idsPerSecond: options.idsPerSecond });
  const retries = samples.map((event) => retryOf(event, Date.now()));
  const fresh = Array.from({ length: 100 }, () => sampleEvent(projectId, Date.now()));
  const answers = await sink.submit([...retries, ...fresh]);
  const answeredDuplicate = retries.filter((retry, i) => answers[i] !== retry && answers[i]?.created_at === samples[i]?.created_at).length;
  // What was queued: only the new ids (a stored duplicate is not queued again).
  const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed']);
  const queuedIds = new Set(jobs.flatMap((job) => ('events' in job.data ? job.data.events.map((event) => event.event_id) : [])));
  await sink.close();
  // The worker's part, done here: store what was queued.
  const writer = new EventWriter(options.clickhouse, noDeadLetters);
  await writer.write(
    fresh.filter((event) => queuedIds.has(event.event_id)),
    `bench:fresh:${randomUUID()}`,
  );
  await queue.obliterate({ force: true });
  await queue.close();
  const counts = await countStored(
    options.clickhouse,
    projectId,
    [...samples, ...fresh].map((event) => event.event_id),
  );
  return {
    mode: 'bullmq',
    idsPerSecond: options.idsPerSecond,
    simulatedHours: hours,
    rememberedIds,
    memoryBytes,
    bytesPerId: memoryBytes / rememberedIds,
    peakBytes: peak - before,
    fillSeconds,
    falseHitRate: maybe / probes.length,
    sampled: samples.length,
    answeredDuplicate,
    storedOnce: samples.filter((event) => counts.get(event.event_id) === 1 && !queuedIds.has(event.event_id)).length,
    newIdsAccepted: fresh.filter((event, i) => answers[retries.length + i] === event && counts.get(event.event_id) === 1).length,
  };
}

type WriterCost = {
  microsecondsPerEvent: number;
  /** The lower quartile of the batches: on a loaded machine, the batches least slowed by others. */
  lowerQuartileMicroseconds: number;
  lookupMs: number;
};

/**
 * CPU per event of the writer's path for client eventIds (lookup of already-stored ids, then the
 * insert), in batches of `batchSize` with 5% retries of ids stored earlier in the run.
 */
export async function writerCost(
  clickhouse: ClickHouseClient,
  projectId: string,
  options: { batches: number; batchSize: number },
): Promise<WriterCost> {
  const [cost] = await writerCosts(clickhouse, [projectId], options);
  return cost as WriterCost;
}

/**
 * writerCost of several projects at once, their batches taking turns: whatever else the machine
 * does in the meantime weighs on each project alike, so their ratio holds on a busy machine too.
 */
export async function writerCosts(
  clickhouse: ClickHouseClient,
  projectIds: string[],
  options: { batches: number; batchSize: number },
): Promise<WriterCost[]> {
  const writer = new EventWriter(clickhouse, noDeadLetters);
  const runs = projectIds.map((projectId) => ({
    projectId,
    stored: [] as IngestEvent[],
    perEvent: [] as number[],
    lookups: [] as number[],
  }));
  for (let batch = 0; batch < options.batches; batch++) {
    for (const run of runs) {
      const now = Date.now();
      const fresh = Array.from({ length: options.batchSize }, () => sampleEvent(run.projectId, now));
      const retried = run.stored.slice(-options.batchSize).filter((_, i) => i % 20 === 0);
      const rows = [...fresh.slice(retried.length), ...retried.map((event) => retryOf(event, now))];
      const before = process.cpuUsage();
      await writer.write(rows, `bench:cost:${randomUUID()}`);
      const used = process.cpuUsage(before);
      // The first batch warms the connection and caches; not counted.
      if (batch > 0) run.perEvent.push((used.user + used.system) / rows.length);
      run.stored.push(...fresh.slice(retried.length));
      const lookupBefore = process.cpuUsage();
      await findStoredEvents(
        clickhouse,
        [run.projectId],
        rows.map((row) => row.event_id),
        ID_LOOKBACK_MS,
      );
      const lookup = process.cpuUsage(lookupBefore);
      if (batch > 0) run.lookups.push((lookup.user + lookup.system) / 1000);
    }
  }
  // Medians: a shared machine's noise lands in single batches.
  return runs.map((run) => ({
    microsecondsPerEvent: median(run.perEvent),
    lowerQuartileMicroseconds: quantile(run.perEvent, 0.25),
    lookupMs: median(run.lookups),
  }));
}

const median = (values: number[]) => quantile(values, 0.5);

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length * q)] ?? Number.NaN;
}

/**
 * Stores `rows` events of `projectId` in the 60 days before the window, then lets the tables
 * settle as a server's would have by the time it holds that many rows: merged, and the index's
 * expired days dropped (its TTL). Measured without this, the background merges of the rows just
 * stored ran during the measurement and were counted as the writer's CPU (1.47x at 50 M rows).
 */
export async function storeOldRows(clickhouse: ClickHouseClient, projectId: string, rows: number): Promise<void> {
  const chunk = 5_000_000;
  const spanMs = 60 * 24 * 3_600_000;
  for (let from = 0; from < rows; from += chunk) {
    const count = Math.min(chunk, rows - from);
    await clickhouse.command({
      query: `
        INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
        SELECT {p:UUID}, t, generateUUIDv4(number), 'old', concat('user-', toString(number % 1000)), '{}', '', t
        FROM (SELECT number, now64(3) - toIntervalMillisecond({lookback:UInt64} + intDiv(({from:UInt64} + number) * {span:UInt64}, {rows:UInt64})) AS t
              FROM numbers({count:UInt64}))`,
      query_params: { p: projectId, lookback: ID_LOOKBACK_MS, from, span: spanMs, rows, count },
      // A request setting, which applies to the INSERT (a SETTINGS clause at the end would apply
      // to the SELECT only): the chunks' blocks are not repeats of each other.
      clickhouse_settings: { insert_deduplicate: 0 },
    });
  }
  const stored = await clickhouse.query({
    query: 'SELECT count() AS n FROM events WHERE project_id = {p:UUID}',
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  const [row] = await stored.json<{ n: string }>();
  if (Number(row?.n) < rows) throw new Error(`stored ${row?.n} older rows, not ${rows}`);
  await clickhouse.command({ query: 'OPTIMIZE TABLE events FINAL' });
  await clickhouse.command({ query: 'OPTIMIZE TABLE event_ids FINAL' });
  await waitForMerges(clickhouse);
}

/** Until no merge or mutation of this server runs (two checks 500 ms apart). */
async function waitForMerges(clickhouse: ClickHouseClient): Promise<void> {
  let quiet = 0;
  while (quiet < 2) {
    const result = await clickhouse.query({
      query: 'SELECT (SELECT count() FROM system.merges) + (SELECT count() FROM system.mutations WHERE NOT is_done) AS busy',
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ busy: string }>();
    quiet = Number(row?.busy ?? 0) === 0 ? quiet + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
