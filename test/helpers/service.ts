import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { expect, inject } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { INGEST_QUEUE } from '../../src/ingest/queue/ingest.queue.js';
import { createSql } from '../../src/oltp/db.js';
import { databaseUrlFor } from './database.js';
import { stopWhenDone } from './lifecycle.js';
import { assertDocumented } from './openapi-validator.js';
import { makeDataDir, PROCESS_WAIT_FLOOR_MS, type ServiceProcess, serviceEnv, spawnScript } from './process.js';

/*
 * Running the service as real child processes (`src/main.ts`) against their own PostgreSQL
 * database, data directory and Redis key prefix, and reading their ClickHouse once stopped.
 */
export const LISTENING = /"msg":"feedback service listening"/;
export const PENDING_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

export type Reply = { status: number; body: any; headers: Headers; ms: number };
export type EventBody = { eventName: string; userId: string; eventId?: string; properties?: Record<string, unknown> };

/**
 * One request to a spawned service; the response is checked against the OpenAPI document like
 * every response of server.ts request().
 */
export async function call(
  base: string,
  method: string,
  urlPath: string,
  options: { bearer?: string; apiKey?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const started = Date.now();
  const response = await fetch(base + urlPath, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
  });
  const text = await response.text();
  assertDocumented({ method, path: urlPath, status: response.status, headers: response.headers, text });
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // keep the text
  }
  return { status: response.status, body, headers: response.headers, ms: Date.now() - started };
}

export function events(count: number, withIds: boolean, tag: string): EventBody[] {
  return Array.from({ length: count }, (_, i) => ({
    eventName: `fault_${tag}`,
    userId: `user-${i % 53}`,
    properties: { i, tag },
    ...(withIds ? { eventId: randomUUID() } : {}),
  }));
}

/** Runs `tasks` with at most `lanes` at once. */
export async function inLanes<T>(items: T[], lanes: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < items.length) await task(items[next++] as T);
    }),
  );
}

/** Kept for the tests that import it from here: the one `sleep` is eventually.ts's. */
export { sleep } from './eventually.js';

/**
 * The ingest queue of a service, seen from the test (its own Redis connection); closed when the
 * test that opened it finishes (closing it earlier is allowed).
 */
export function openQueue(redisUrl: string, prefix: string) {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  connection.on('error', () => {});
  const queue = new Queue(INGEST_QUEUE, { connection, prefix });
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      await queue.close().catch(() => undefined);
      connection.disconnect();
    })();
    return closed;
  };
  stopWhenDone(close);
  return {
    queue,
    async pending(): Promise<number> {
      const counts = await queue.getJobCounts(...PENDING_STATES);
      return PENDING_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    },
    close,
  };
}

export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  // Bounded: a test may leave its own Redis stopped (SIGSTOP) when it fails.
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, connectTimeout: 5_000, commandTimeout: 5_000 });
  redis.on('error', () => {});
  try {
    const keys = await redis.keys(`${prefix}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
}

let databaseSerial = 0;

/** A fresh database cloned from the run's migrated template; global teardown drops it. */
export async function createDatabase(): Promise<string> {
  const serverUrl = inject('postgresServerUrl');
  const name = `${inject('databasePrefix')}_faults_${process.pid}_${++databaseSerial}`;
  const admin = createSql(serverUrl, { max: 1 });
  try {
    await admin`create database ${admin(name)} template ${admin(inject('templateDatabase'))}`;
  } finally {
    await admin.end();
  }
  return databaseUrlFor(serverUrl, name);
}

export type ServiceSetup = { env: NodeJS.ProcessEnv; base: string; dataDir: string; prefix: string; operatorToken: string };

/**
 * Everything a spawned service needs of its own: a free port, a DATA_DIR, a database cloned from
 * the run's template, a Redis key prefix, an operator token. Start it with startService (as often
 * as the test restarts it). The DATA_DIR and the prefix's Redis keys go when the test finishes,
 * after the processes (each stops by itself: process.ts); global teardown drops the database.
 */
export async function serviceSetup(redisUrl?: string): Promise<ServiceSetup> {
  const port = await findFreePort();
  const dataDir = await makeDataDir();
  const prefix = `fbfault-${randomBytes(6).toString('hex')}`;
  // A test may have stopped its own Redis by then: nothing left to delete.
  if (redisUrl) stopWhenDone(() => deleteKeys(redisUrl, prefix).catch(() => undefined));
  const operatorToken = `fbo_test_${randomBytes(16).toString('hex')}`;
  const env = serviceEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: await createDatabase(),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    QUEUE_PREFIX: prefix,
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: 'info',
  });
  return { env, base: `http://127.0.0.1:${port}`, dataDir, prefix, operatorToken };
}

/** `npm start` as a child process; resolves once it listens (within PROCESS_WAIT_FLOOR_MS: a loaded machine). */
export async function startService(setup: ServiceSetup): Promise<ServiceProcess> {
  const proc = spawnScript('src/main.ts', setup.env);
  await proc.waitForStdout(LISTENING, PROCESS_WAIT_FLOOR_MS);
  return proc;
}

/** SIGTERM, and the graceful exit 0 that must follow. */
export async function stopService(proc: ServiceProcess): Promise<void> {
  proc.signal('SIGTERM');
  const exit = await proc.waitForExit(PROCESS_WAIT_FLOOR_MS);
  expect(exit.code, proc.describe().slice(-4_000)).toBe(0);
}

/** Copies of each event id of the project in a stopped service's ClickHouse. */
export type StoredDump = {
  /** Copies of each stored event id. */
  copies: Map<string, number>;
  /** Distinct ids in the event_ids index (the view's rows). */
  indexed: number;
  /** Rollup rows (daily and hourly) of the events' days whose counts differ from the events. */
  rollupMismatches: number;
};

export async function storedCopies(dataDir: string, projectId: string): Promise<Map<string, number>> {
  return (await storedDump(dataDir, projectId)).copies;
}

/** What a stopped service's ClickHouse holds of one project: its events and their dependents. */
export async function storedDump(dataDir: string, projectId: string): Promise<StoredDump> {
  const proc = spawnScript('test/helpers/clickhouse-dump.ts', {
    ...serviceEnv({}),
    DUMP_DATA_DIR: dataDir,
    DUMP_PROJECT_ID: projectId,
  });
  const exit = await proc.waitForExit(PROCESS_WAIT_FLOOR_MS);
  expect(exit.code, proc.describe().slice(-4_000)).toBe(0);
  const line = /^DUMP (.*)$/m.exec(proc.stdout);
  expect(line, proc.describe().slice(-4_000)).not.toBeNull();
  const dump = JSON.parse(line?.[1] ?? '{}') as { rows: [string, number][]; indexed: number; rollupMismatches: number };
  return { copies: new Map(dump.rows), indexed: dump.indexed, rollupMismatches: dump.rollupMismatches };
}

/**
 * Exactly once: each acknowledged id stored once, no refused id stored, no row that was never
 * acknowledged (an event refused without a client eventId has no id to look for: it would show
 * up here as a row outside the acknowledged set).
 */
export function expectExactlyOnce(copies: Map<string, number>, acknowledged: Set<string>, refused: Set<string> = new Set()) {
  const duplicated = [...copies].filter(([, n]) => n !== 1);
  const missing = [...acknowledged].filter((id) => !copies.has(id));
  const refusedStored = [...refused].filter((id) => copies.has(id));
  const unknown = [...copies.keys()].filter((id) => !acknowledged.has(id));
  expect({
    duplicated: duplicated.slice(0, 5),
    duplicatedCount: duplicated.length,
    missing: missing.slice(0, 5),
    missingCount: missing.length,
    refusedStored: refusedStored.slice(0, 5),
    unknown: unknown.slice(0, 5),
    unknownCount: unknown.length,
  }).toEqual({
    duplicated: [],
    duplicatedCount: 0,
    missing: [],
    missingCount: 0,
    refusedStored: [],
    unknown: [],
    unknownCount: 0,
  });
  const totalRows = [...copies.values()].reduce((sum, n) => sum + n, 0);
  expect(totalRows).toBe(copies.size);
  expect(copies.size).toBe(acknowledged.size);
}
