import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { inject } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { apiRunsWorkers, loadConfig } from '../../src/core/config.js';
import { LogEventSink } from '../../src/ingest/log/log-sink.js';
import { migrateClickHouse } from '../../src/olap/migrations.js';
import { createSql } from '../../src/oltp/db.js';
import { createServices, type Services } from '../../src/runtime/services.js';
import { startWorkers, type Workers } from '../../src/workers/runner.js';
import { databaseUrlFor } from './database.js';
import { eventually } from './eventually.js';
import { provide, stopWhenDone } from './lifecycle.js';
import { assertDocumented } from './openapi-validator.js';

export type HttpResponse<T = any> = { status: number; body: T; headers: Headers };

export type RequestOptions = {
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  rawBody?: string;
  headers?: Record<string, string>;
  apiKey?: string;
  bearer?: string;
  userId?: string;
  /**
   * Skips the check of the response against the OpenAPI document (openapi-validator.ts), which
   * every other request gets. Give the reason: only for a response that cannot be in the document.
   */
  skipOpenApiCheck?: string;
};

export type TestServer = {
  url: string;
  /** The server's DATA_DIR (chDB's data, the embedded ingest log). */
  dataDir: string;
  services: Services;
  sql: Services['sql'];
  clickhouse: Services['clickhouse'];
  workers: Workers | undefined;
  operatorToken: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>;
  /** Rows of a ClickHouse query (JSONEachRow), with named {param:Type} parameters. */
  clickhouseRows<T = Record<string, unknown>>(query: string, params?: Record<string, unknown>): Promise<T[]>;
  /**
   * Waits until every event acknowledged so far is in ClickHouse: an answer of 200 means the events
   * are durable in the ingest log (embedded) or the queue (Redis), and its shipper or worker writes
   * them a moment later (docs/ingestion.md).
   */
  eventsVisible(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

export type TestServerOptions = {
  /** Queue events through the machine's Redis (REDIS_URL of the test run, or 127.0.0.1:6379). */
  redis?: boolean;
  /** Start the workers (queue consumer, outbox relay) as `npm start` would. Default true. */
  workers?: boolean;
  /**
   * Builds the ClickHouse client instead of the config (e.g. a fault-injecting wrapper around a
   * real chDB connection); receives the server's own data directory.
   */
  clickhouse?: (dataDir: string) => Services['clickhouse'];
  /** Environment variables for loadConfig on top of the test's own (e.g. small RATE_LIMIT_* budgets). */
  env?: Record<string, string>;
};

/** Redis for BullMQ-mode tests: TEST_REDIS_URL, else the machine's. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let serial = 0;

/**
 * The app for the tests of this file or describe block (call it there, as Outline's
 * getTestServer()): started before them, closed after them (lifecycle.ts). Use `server` in the
 * block's tests and hooks as it is; a hook registered after this call sees it started. Options
 * that depend on something an earlier hook starts (a receiver's URL) are given as a function.
 */
export function useTestServer(options: TestServerOptions | (() => TestServerOptions) = {}): TestServer {
  return provide(
    'test server',
    () => startTestServer(typeof options === 'function' ? options() : options),
    (server) => server.close(),
  );
}

/**
 * The real app, wired by the same createAppContext as `npm start`, on an ephemeral port: its own
 * PostgreSQL database (cloned from the run's migrated template), its own embedded ClickHouse
 * (chDB) directory and, with `redis`, its own queue prefix on the machine's Redis. Requests go
 * over HTTP, exactly as a client's would. Closed when the test that started it finishes, or, started
 * in a hook, after the file (lifecycle.ts); closing it earlier is allowed.
 */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const serverUrl = inject('postgresServerUrl');
  const database = `${inject('databasePrefix')}_${process.pid}_${++serial}`;
  const admin = createSql(serverUrl, { max: 1 });
  try {
    await admin`create database ${admin(database)} template ${admin(inject('templateDatabase'))}`;
  } finally {
    await admin.end();
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-test-data-'));
  await chmod(dataDir, 0o755);
  const operatorToken = `fbo_test_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    DATABASE_URL: databaseUrlFor(serverUrl, database),
    DATA_DIR: dataDir,
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: 'silent',
    // The suite fires bursts no production budget allows (100 concurrent votes with one key, dozens
    // of 401s from 127.0.0.1): budgets that never trip, so every request still goes through the
    // limiter. Tests of the limits themselves pass small ones in `env`.
    RATE_LIMIT_INGEST: '1000000/s',
    RATE_LIMIT_API: '1000000/s',
    RATE_LIMIT_AUTH_FAILURES: '1000000/min',
    ...(options.redis ? { REDIS_URL: TEST_REDIS_URL, QUEUE_PREFIX: `fbtest-${randomBytes(6).toString('hex')}` } : {}),
    ...options.env,
  });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const services = await createServices(config, logger, options.clickhouse ? { clickhouse: options.clickhouse(dataDir) } : {});
  await migrateClickHouse(services.clickhouse);
  const workers = options.workers !== false && apiRunsWorkers(config) ? startWorkers(services) : undefined;
  const app = buildApp({ ...services, operatorToken });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request = <T>(method: string, urlPath: string, options: RequestOptions = {}) => requestTo<T>(url, method, urlPath, options);

  let closed: Promise<void> | undefined;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await services.eventSink.close();
    await workers?.stop();
    if (services.queue && services.redis) {
      await services.queue.obliterate({ force: true }).catch(() => undefined);
      const keys = await services.redis.keys(`${config.queuePrefix}:*`);
      if (keys.length > 0) await services.redis.del(...keys);
    }
    await services.close();
    // The engine's background threads may still be writing a part in it as the directory goes
    // (ENOTEMPTY seen in CI): rm retries those errors.
    await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  const testServer: TestServer = {
    url,
    dataDir,
    services,
    sql: services.sql,
    clickhouse: services.clickhouse,
    workers,
    operatorToken,
    request,
    async clickhouseRows<T>(query: string, params: Record<string, unknown> = {}) {
      const result = await services.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
      return result.json<T>();
    },
    async eventsVisible(timeoutMs = 30_000) {
      const sink = services.eventSink;
      const queue = services.queue;
      if (sink instanceof LogEventSink) {
        await eventually('the ingest log shipped to ClickHouse', timeoutMs, async () => sink.unshippedBytes === 0);
      } else if (queue) {
        await eventually('the ingest queue drained into ClickHouse', timeoutMs, async () => {
          const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'prioritized');
          return Object.values(counts).every((n) => n === 0);
        });
      }
    },
    /** Closes the server once; later calls wait for that one. */
    close() {
      closed ??= close();
      return closed;
    },
  };
  stopWhenDone(() => testServer.close());
  return testServer;
}

/**
 * One HTTP request to `base` (a test server, or any other server of the app), its JSON body parsed
 * when it is JSON. The response is checked against the OpenAPI document: a status, Content-Type or
 * body the document does not allow throws (unless `skipOpenApiCheck`).
 */
export async function requestTo<T = any>(
  base: string,
  method: string,
  urlPath: string,
  options: RequestOptions = {},
): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  if (options.userId !== undefined) headers['x-user-id'] = options.userId;
  let body: string | undefined = options.rawBody;
  if (body === undefined && options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(base + urlPath, { method, headers, body });
  const text = await response.text();
  if (!options.skipOpenApiCheck) assertDocumented({ method, path: urlPath, status: response.status, headers: response.headers, text });
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text, the test will say what it expected
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}
