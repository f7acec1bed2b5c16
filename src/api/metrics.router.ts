import { Router } from '@koa/router';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import { MetricsError } from '../metrics/errors.js';
import * as metrics from '../metrics/service.js';
import { adminAuth, apiKeyAuth, keyProject, ownedProject } from './auth.js';
import type { ApiDeps } from './deps.js';
import type { AppContext, AppState } from './state.js';

/** Query parameters read verbatim (SPEC 1, rule 3); a repeated one is refused, not guessed. */
function metricsQuery(ctx: AppContext): Record<string, string | undefined> {
  const query: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(ctx.query)) {
    if (Array.isArray(value)) throw new MetricsError('METRICS_INVALID_PARAMETER', `${name} must be given at most once`);
    query[name] = value;
  }
  return query;
}

type Operation = (client: ClickHouseClient, target: metrics.MetricsTarget, query: Record<string, string | undefined>) => Promise<unknown>;

const OPERATIONS: Record<string, Operation> = {
  summary: metrics.summary,
  timeseries: metrics.timeseries,
  breakdown: metrics.breakdown,
  events: metrics.eventsFeed,
};

/**
 * SPEC 4.10: the four metrics operations on two surfaces. With X-API-Key they answer for the
 * key's project; with the account's admin token, for `:id`, adding the SDK-user and revenue
 * measures.
 */
export function metricsRouter({ sql, projectKeys, clickhouse }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const keyAuth = apiKeyAuth(projectKeys);
  const adminTokenAuth = adminAuth(sql);

  for (const [name, operation] of Object.entries(OPERATIONS)) {
    router.get(`/metrics/${name}`, keyAuth, async (ctx) => {
      const project = keyProject(ctx);
      ctx.body = await operation(clickhouse, { projectId: project.id, plan: project.plan, surface: 'key' }, metricsQuery(ctx));
    });
    router.get(`/projects/:id/metrics/${name}`, adminTokenAuth, async (ctx) => {
      const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
      ctx.body = await operation(clickhouse, { projectId: project.id, plan: project.plan, surface: 'admin' }, metricsQuery(ctx));
    });
  }
  return router;
}
