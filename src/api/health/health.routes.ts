import { defineRoute } from '../define-route.js';
import type { ApiDeps } from '../deps.js';
import { json, ROOT_SERVER } from '../shared/building-blocks.js';
import { HealthResponse, ReadinessResponse } from './health.responses.js';

type Check = 'ok' | 'unavailable';

const CHECK_TIMEOUT_MS = 2_000;

/** One dependency's probe, bounded in time; a failure is logged and reported, never thrown. */
async function check({ logger }: ApiDeps, name: string, probe: () => Promise<unknown>): Promise<Check> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch (error) {
    logger.warn({ err: error, dependency: name }, 'readiness check failed');
    return 'unavailable';
  } finally {
    clearTimeout(timer);
  }
}

/** Liveness and readiness, outside /api/v1 and without auth, for load balancers and orchestrators. */
export const healthRoutes = [
  defineRoute({
    method: 'get',
    path: '/healthz',
    mount: 'root',
    auth: 'public',
    operationId: 'liveness',
    tags: ['Service'],
    summary: 'Liveness',
    servers: ROOT_SERVER,
    responses: { 200: json('The process runs.', HealthResponse) },
    handler: (ctx) => {
      ctx.body = { status: 'ok' };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/readyz',
    mount: 'root',
    auth: 'public',
    operationId: 'readiness',
    tags: ['Service'],
    summary: 'Readiness of each dependency',
    servers: ROOT_SERVER,
    responses: {
      200: json('Every dependency answers.', ReadinessResponse),
      503: json('A dependency is unavailable (`"unavailable"`).', ReadinessResponse),
    },
    handler: async (ctx, deps) => {
      const { sql, clickhouse, redis } = deps;
      const [postgres, clickhouseCheck, redisCheck] = await Promise.all([
        check(deps, 'postgres', () => sql`select 1`),
        check(deps, 'clickhouse', async () => {
          const result = await clickhouse.ping();
          if (!result.success) throw result.error;
        }),
        redis ? check(deps, 'redis', () => redis.ping()) : Promise.resolve(undefined),
      ]);
      const checks = { postgres, clickhouse: clickhouseCheck, ...(redisCheck ? { redis: redisCheck } : {}) };
      const ready = Object.values(checks).every((value) => value === 'ok');
      ctx.status = ready ? 200 : 503;
      ctx.body = { status: ready ? 'ok' : 'unavailable', checks };
    },
  }),
];
