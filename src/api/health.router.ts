import { Router } from '@koa/router';
import type { ApiDeps } from './deps.js';
import type { AppState } from './state.js';

/** Liveness and readiness, outside /api/v1 and without auth, for load balancers and orchestrators. */
export function healthRouter({ sql, logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });

  router.get('/readyz', async (ctx) => {
    const postgres = await sql`select 1`.then(
      () => 'ok' as const,
      (error: unknown) => {
        logger.warn({ err: error }, 'readiness: postgres unreachable');
        return 'unavailable' as const;
      },
    );
    const ready = postgres === 'ok';
    ctx.status = ready ? 200 : 503;
    ctx.body = { status: ready ? 'ok' : 'unavailable', checks: { postgres } };
  });

  return router;
}
