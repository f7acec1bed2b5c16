import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { parseSecretsKey } from './secret-box.js';

/** A rate-limit budget: `points` requests per window of `windowSeconds`; null is no limit. */
export type RateLimit = { points: number; windowSeconds: number } | null;

const WINDOW_UNITS: Record<string, number> = { s: 1, min: 60, h: 3600 };

/**
 * `<requests>/<window>`: `1000/s`, `6000/min`, `20/5min`, `100/10s`, `500/h`; `0` or `off` turns
 * the budget off (as does a count of 0). Windows are fixed: the budget refills at once when the window ends.
 */
function rateLimitVariable(fallback: string) {
  return z
    .string()
    .transform((value, ctx): RateLimit => {
      const text = value.trim().toLowerCase();
      if (text === '0' || text === 'off') return null;
      const match = /^(\d{1,9})\s*\/\s*(\d{1,5})?\s*(s|min|h)$/.exec(text);
      const points = Number(match?.[1]);
      const windowSeconds = Number(match?.[2] ?? 1) * (WINDOW_UNITS[match?.[3] ?? ''] ?? NaN);
      if (!match || !(windowSeconds > 0) || windowSeconds > 86_400) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be <requests>/<window> such as 100/s, 6000/min or 20/5min (window at most 24h), or 0 or off',
        });
        return z.NEVER;
      }
      return points === 0 ? null : { points, windowSeconds };
    })
    .prefault(fallback);
}

/** A size in bytes: `536870912`, `512MiB`, `64MB`, `2GiB`, `100k` (binary multiples either way). */
function bytesVariable(fallback: string) {
  const units: Record<string, number> = { '': 1, k: 2 ** 10, m: 2 ** 20, g: 2 ** 30 };
  return z
    .string()
    .transform((value, ctx) => {
      const match = /^(\d{1,15})\s*(?:([kmg])i?)?b?$/i.exec(value.trim());
      const bytes = Number(match?.[1]) * (units[(match?.[2] ?? '').toLowerCase()] ?? NaN);
      if (!match || !Number.isSafeInteger(bytes) || bytes < 1) {
        ctx.addIssue({ code: 'custom', message: 'must be a size in bytes such as 536870912, 512MiB or 2GiB' });
        return z.NEVER;
      }
      return bytes;
    })
    .prefault(fallback);
}

const seconds = (fallback: number) => z.coerce.number().int().min(1).max(3600).default(fallback);

/**
 * Every setting of the service, read from the environment once at start-up.
 * Nothing else in the code base reads `process.env`.
 */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  CLICKHOUSE_URL: z
    .string()
    .regex(/^https?:\/\//, 'must be an http:// or https:// URL')
    .optional(),
  CLICKHOUSE_CLUSTER: z
    .string()
    .regex(/^[A-Za-z_][\w-]{0,63}$/, 'must be a cluster name of remote_servers: letters, digits, _ or -')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional(),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[\w.-]{1,64}$/, 'must be 1 to 64 letters, digits, _ . or -')
    .default('feedback'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  INGEST_LOG_MAX_BYTES: bytesVariable('512MiB'),
  INGEST_LOG_SHUTDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  IDEMPOTENCY_IDS_PER_SECOND: z.coerce.number().int().min(1).max(1_000_000).default(1000),
  INGEST_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(256),
  API_KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  SECRETS_KEY: z
    .string()
    .refine(
      (value) => parseSecretsKey(value) !== null,
      'must be 64 hex digits or 32 bytes in base64, e.g. the output of: openssl rand -hex 32',
    )
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_INGEST: rateLimitVariable('1000/s'),
  RATE_LIMIT_API: rateLimitVariable('100/s'),
  RATE_LIMIT_AUTH_FAILURES: rateLimitVariable('20/min'),
  RATE_LIMIT_ANONYMOUS: rateLimitVariable('30/h'),
  TRUSTED_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  HTTP_REQUEST_TIMEOUT_SECONDS: seconds(60),
  HTTP_HEADERS_TIMEOUT_SECONDS: seconds(15),
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: seconds(5),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(15_000),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  MAIL_FROM: z.string().min(3).max(320).optional(),
  PUBLIC_URL: z
    .string()
    .regex(/^https?:\/\/[^/]+/, 'must be an http:// or https:// URL')
    .transform((url) => url.replace(/\/+$/, ''))
    .optional(),
  ALLOW_PRIVATE_WEBHOOKS: z
    .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
    .transform((value) => value === 'true' || value === '1')
    .default(false),
  DELIVERY_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  DELIVERY_TIMEOUT_MS: z.coerce.number().int().min(50).max(120_000).default(10_000),
  DELIVERY_BACKOFF_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  /** Limit of one POST /admin/sql query, its wait for a turn included; default 5 s embedded, 10 s with a server. */
  OPERATOR_SQL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).optional(),
  /** POST /projects/:id/sql (docs/project-sql.md): time limit (default as the operator's), memory, queries per account at once. */
  PROJECT_SQL_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).optional(),
  PROJECT_SQL_MAX_MEMORY_MB: z.coerce.number().int().min(16).max(1_048_576).default(512),
  PROJECT_SQL_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /** The ClickHouse interface (docs/clickhouse-interface.md): its own port (0: off), result bounds, time limit. */
  CLICKHOUSE_INTERFACE_PORT: z.coerce.number().int().min(0).max(65535).default(8124),
  CLICKHOUSE_INTERFACE_MAX_ROWS: z.coerce.number().int().min(1).max(1_000_000_000).default(10_000_000),
  CLICKHOUSE_INTERFACE_MAX_BYTES: bytesVariable('1GiB'),
  CLICKHOUSE_INTERFACE_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  /** GET /projects/:id/live (docs/insights.md): open streams per account and API process; the heartbeat's period. */
  LIVE_MAX_CONNECTIONS_PER_ACCOUNT: z.coerce.number().int().min(1).max(1000).default(5),
  LIVE_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(300).default(15),
});

export type Config = {
  port: number;
  host: string;
  /** Absolute path of the directory that holds embedded data and generated secrets. */
  dataDir: string;
  /** Unset means: start the embedded PostgreSQL under dataDir. */
  databaseUrl: string | undefined;
  /** Unset means: embedded ClickHouse (chDB) under dataDir, inside this process. */
  clickhouseUrl: string | undefined;
  /**
   * Unset means: a single ClickHouse server (sql/clickhouse/). Set: the cluster of that name,
   * migrated with sql/clickhouse/cluster/ (Replicated tables behind Distributed ones).
   */
  clickhouseCluster: string | undefined;
  /** Unset means: no queue; events are batched in process and written directly. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key of this service (BullMQ queues, idempotency keys). */
  queuePrefix: string;
  /** Port of the Prometheus /metrics endpoint (0: not served). */
  telemetryPort: number;
  /** Embedded ingestion (no REDIS_URL): the durable local log under DATA_DIR/ingest-log (docs/ingestion.md). */
  ingestLog: {
    /** Bytes of events in the log not yet in ClickHouse at most; beyond, ingestion answers 503. */
    maxBytes: number;
    /** A graceful stop ships the log for at most this long; the rest waits for the next start. */
    shutdownShipMs: number;
  };
  /**
   * The rate of new eventIds the idempotency filters are sized for (both modes): each takes
   * 3 bytes per id of the window at this rate, whatever the traffic (docs/ingestion.md).
   */
  idempotencyIdsPerSecond: number;
  /** BullMQ jobs one worker process holds at once; their events are written in one insert. */
  ingestWorkerConcurrency: number;
  /**
   * How long an API-key lookup may be reused in process at most (0: never). Changes reach every
   * process at once through LISTEN/NOTIFY; this bounds staleness while that connection is down.
   */
  apiKeyCacheSeconds: number;
  operatorToken: string | undefined;
  /**
   * The key that seals the secrets the service reads back (tracker tokens, src/core/secret-box.ts);
   * unset: generated once and kept in `<dataDir>/secrets-key` (src/runtime/secrets-key.ts).
   */
  secretsKey: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  /** Request budgets (README "Rate limiting"); in Redis under `<queuePrefix>:ratelimit:` when REDIS_URL is set. */
  rateLimits: {
    /** Per API key: POST /events/track and /events/batch (a batch is one request). */
    ingest: RateLimit;
    /** Per API key, admin token or operator token: every other authenticated route. */
    api: RateLimit;
    /** Per client IP: answers 401; once spent, that IP's authenticated requests get 429. */
    authFailures: RateLimit;
    /** Per client IP: anonymous votes, comments and submissions on a public board. */
    anonymous: RateLimit;
    /** Reverse proxies in front of the API whose X-Forwarded-For entry names the client (0: none). */
    trustedProxyHops: number;
  };
  /** Notifications: email and outbound webhooks (README "Notifications"). */
  delivery: {
    /** smtp(s):// URL of the mail server; unset: each message is written to DATA_DIR/mail as a .eml file. */
    smtpUrl: string | undefined;
    /** From address of every email. */
    mailFrom: string;
    /** Base URL of this service as recipients reach it (unsubscribe links), without a trailing slash. */
    publicUrl: string;
    /** Let webhooks reach loopback, private and link-local addresses (tests, private networks). */
    allowPrivateWebhooks: boolean;
    /** Attempts of one delivery before it is marked failed. */
    maxAttempts: number;
    /** Limit of one attempt (connect, send, answer). */
    timeoutMs: number;
    /** Wait after the first failed attempt; doubled after each further one. */
    backoffMs: number;
  };
  /** Timeouts of the HTTP server against slow and idle connections. */
  http: {
    /** The whole request (headers and body) must arrive within this time, else 408. */
    requestTimeoutMs: number;
    /** The request headers must arrive within this time, else 408. */
    headersTimeoutMs: number;
    /** An idle keep-alive connection is closed after this time. */
    keepAliveTimeoutMs: number;
  };
  /**
   * A SIGTERM or SIGINT ends the process within this time, whatever is still running
   * (docs/operations.md, "Stopping"); the graceful steps get what is left of it.
   */
  shutdownTimeoutMs: number;
  /**
   * Limit of one operator SQL query (POST /admin/sql), counted from its arrival, so its wait for
   * a turn counts too. Unset: 5 s with embedded chDB, where it shares the process, 10 s with a server.
   */
  operatorSqlTimeoutMs: number | undefined;
  /** Tenant SQL (POST /projects/:id/sql, docs/project-sql.md). */
  projectSql: {
    /** Limit of one query, its wait included; unset: 5 s with embedded chDB, 10 s with a server. */
    timeoutMs: number | undefined;
    /** max_memory_usage of one query, in bytes. */
    maxMemoryBytes: number;
    /** Queries of one account running or waiting at once (per API process); more get a 429. */
    accountConcurrency: number;
  };
  /** The live view's SSE streams (GET /projects/:id/live). */
  live: { maxConnectionsPerAccount: number; heartbeatMs: number };
  /** The read-only ClickHouse HTTP interface (docs/clickhouse-interface.md); also at /clickhouse of the API port. */
  clickhouseInterface: {
    /** Its own port; 0: not served on a port of its own. */
    port: number;
    /** Rows of one answer at most; more fail the query with TOO_MANY_ROWS_OR_BYTES. */
    maxRows: number;
    /** Bytes of one answer (before HTTP compression) at most; more fail it the same way. */
    maxBytes: number;
    /** Time of one query, its wait for a turn included. */
    timeoutMs: number;
  };
};

/**
 * chDB binds its data directory to one process, so with embedded ClickHouse the API process runs
 * the workers; so it does without Redis, where there is no queue for a worker to read. Only with
 * both a ClickHouse server and Redis do the workers run apart (`npm run worker`).
 */
export const apiRunsWorkers = (config: Config) => !config.clickhouseUrl || !config.redisUrl;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; throws a ConfigError whose message is one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable is treated as unset, as shells and compose files often export `FOO=`.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = issue?.path.join('.') ?? 'environment';
    throw new ConfigError(`Invalid environment variable ${variable}: ${issue?.message ?? 'invalid value'}`);
  }
  const e = parsed.data;
  if (e.CLICKHOUSE_CLUSTER && !e.CLICKHOUSE_URL) {
    throw new ConfigError('Invalid environment variable CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL (embedded chDB is not a cluster)');
  }
  if (e.HTTP_HEADERS_TIMEOUT_SECONDS > e.HTTP_REQUEST_TIMEOUT_SECONDS) {
    throw new ConfigError('Invalid environment variable HTTP_HEADERS_TIMEOUT_SECONDS: must not exceed HTTP_REQUEST_TIMEOUT_SECONDS');
  }
  // 0.0.0.0 (every interface) is where the server listens, not an address anyone can open.
  const publicHost = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const publicUrl = e.PUBLIC_URL ?? `http://${publicHost.includes(':') ? `[${publicHost}]` : publicHost}:${e.PORT}`;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    clickhouseUrl: e.CLICKHOUSE_URL,
    clickhouseCluster: e.CLICKHOUSE_CLUSTER,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    telemetryPort: e.METRICS_PORT,
    ingestLog: { maxBytes: e.INGEST_LOG_MAX_BYTES, shutdownShipMs: e.INGEST_LOG_SHUTDOWN_SECONDS * 1000 },
    idempotencyIdsPerSecond: e.IDEMPOTENCY_IDS_PER_SECOND,
    ingestWorkerConcurrency: e.INGEST_WORKER_CONCURRENCY,
    apiKeyCacheSeconds: e.API_KEY_CACHE_SECONDS,
    operatorToken: e.OPERATOR_TOKEN,
    secretsKey: e.SECRETS_KEY,
    logLevel: e.LOG_LEVEL,
    rateLimits: {
      ingest: e.RATE_LIMIT_INGEST,
      api: e.RATE_LIMIT_API,
      authFailures: e.RATE_LIMIT_AUTH_FAILURES,
      anonymous: e.RATE_LIMIT_ANONYMOUS,
      trustedProxyHops: e.TRUSTED_PROXY_HOPS,
    },
    delivery: {
      smtpUrl: e.SMTP_URL,
      publicUrl,
      mailFrom: e.MAIL_FROM ?? `Feedback <feedback@${mailDomain(publicUrl)}>`,
      allowPrivateWebhooks: e.ALLOW_PRIVATE_WEBHOOKS,
      maxAttempts: e.DELIVERY_MAX_ATTEMPTS,
      timeoutMs: e.DELIVERY_TIMEOUT_MS,
      backoffMs: e.DELIVERY_BACKOFF_MS,
    },
    http: {
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_SECONDS * 1000,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    operatorSqlTimeoutMs: e.OPERATOR_SQL_TIMEOUT_MS,
    projectSql: {
      timeoutMs: e.PROJECT_SQL_TIMEOUT_MS,
      maxMemoryBytes: e.PROJECT_SQL_MAX_MEMORY_MB * 1024 * 1024,
      accountConcurrency: e.PROJECT_SQL_ACCOUNT_CONCURRENCY,
    },
    live: { maxConnectionsPerAccount: e.LIVE_MAX_CONNECTIONS_PER_ACCOUNT, heartbeatMs: e.LIVE_HEARTBEAT_SECONDS * 1000 },
    clickhouseInterface: {
      port: e.CLICKHOUSE_INTERFACE_PORT,
      maxRows: e.CLICKHOUSE_INTERFACE_MAX_ROWS,
      maxBytes: e.CLICKHOUSE_INTERFACE_MAX_BYTES,
      timeoutMs: e.CLICKHOUSE_INTERFACE_TIMEOUT_MS,
    },
  };
}

/** The host of PUBLIC_URL as a mail domain; an IP address is no domain, so `localhost` then. */
function mailDomain(publicUrl: string): string {
  const host = new URL(publicUrl).hostname;
  return isIP(host.replace(/^\[|\]$/g, '')) ? 'localhost' : host;
}
