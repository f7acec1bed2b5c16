import path from 'node:path';
import { z } from 'zod';

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
  CLICKHOUSE_URL: z.string().regex(/^https?:\/\//, 'must be an http:// or https:// URL').optional(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
  QUEUE_PREFIX: z.string().regex(/^[\w.-]{1,64}$/, 'must be 1 to 64 letters, digits, _ . or -').default('feedback'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  INGEST_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  OPERATOR_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
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
  /** Unset means: no queue; events are batched in process and written directly. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key of this service (BullMQ queues, idempotency keys). */
  queuePrefix: string;
  /** Port of the Prometheus /metrics endpoint (0: not served). */
  metricsPort: number;
  /** BullMQ jobs one worker process writes at once. */
  ingestWorkerConcurrency: number;
  operatorToken: string | undefined;
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
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
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    clickhouseUrl: e.CLICKHOUSE_URL,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    metricsPort: e.METRICS_PORT,
    ingestWorkerConcurrency: e.INGEST_WORKER_CONCURRENCY,
    operatorToken: e.OPERATOR_TOKEN,
    logLevel: e.LOG_LEVEL,
  };
}
