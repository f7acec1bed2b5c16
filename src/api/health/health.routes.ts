import { Router } from '@koa/router';
import type { ApiDeps } from '../deps.js';
import type { AppState } from '../state.js';

type Check = 'ok' | 'unavailable';

const CHECK_TIMEOUT_MS = 2_000;

/** Liveness and readiness, outside /api/v1 and without auth, for load balancers and orchestrators. */
export function healthRouter({ sql, clickhouse, redis, logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  async function check(name: string, probe: () => Promise<unknown>): Promise<Check> {
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

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    const [postgres, clickhouseCheck, redisCheck] = await Promise.all([
      check('postgres', () => sql`select 1`),
      check('clickhouse', async () => {
        const result = await clickhouse.ping();
        if (!result.success) throw result.error;
      }),
      redis ? check('redis', () => redis.ping()) : Promise.resolve(undefined),
    ]);
    const checks = { postgres, clickhouse: clickhouseCheck, ...(redisCheck ? { redis: redisCheck } : {}) };
    const ready = Object.values(checks).every((value) => value === 'ok');
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ok' : 'unavailable', checks };
  });

  return router;
}
