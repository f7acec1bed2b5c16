import { Router } from '@koa/router';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import * as metrics from '../../olap/metrics/metrics.planner.js';
import { adminAuth, apiKeyAuth, keyProject, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import type { RequestContext, AppState } from '../state.js';
import { readQuery } from '../validation.js';

type Operation = (client: ClickHouseClient, target: metrics.MetricsTarget, query: Record<string, string | undefined>) => Promise<unknown>;

/** The parameters every operation reads (the events feed reads `measures` only to refuse it). */
const COMMON_PARAMETERS = ['date_from', 'date_to', 'event', 'measures'] as const;

/**
 * Each operation with its two literal paths (the API key's project, or `:id` of the admin token's
 * account), so that searching for a path finds its route; registered in this order.
 */
const OPERATIONS: readonly { keyPath: string; adminPath: string; run: Operation; parameters: readonly string[] }[] = [
  { keyPath: '/metrics/summary', adminPath: '/projects/:id/metrics/summary', run: metrics.summary, parameters: COMMON_PARAMETERS },
  {
    keyPath: '/metrics/timeseries',
    adminPath: '/projects/:id/metrics/timeseries',
    run: metrics.timeseries,
    parameters: [...COMMON_PARAMETERS, 'interval'],
  },
  {
    keyPath: '/metrics/breakdown',
    adminPath: '/projects/:id/metrics/breakdown',
    run: metrics.breakdown,
    parameters: [...COMMON_PARAMETERS, 'dimension', 'limit'],
  },
  {
    keyPath: '/metrics/events',
    adminPath: '/projects/:id/metrics/events',
    run: metrics.eventsFeed,
    parameters: [...COMMON_PARAMETERS, 'limit', 'cursor', 'user_id'],
  },
];

/**
 * The operation's query parameters under their documented names (readQuery: the camelCase alias
 * of each, `measures` repeated or as a comma list); refusals in the metrics error body.
 */
function metricsQuery(ctx: RequestContext, parameters: readonly string[]): Record<string, string | undefined> {
  return readQuery(ctx.query, parameters, (name, problem) => new MetricsError('METRICS_INVALID_PARAMETER', `${name} ${problem}`), {
    lists: ['measures'],
  });
}

/**
 * SPEC 4.10: the four metrics operations on two surfaces. With X-API-Key they answer for the
 * key's project; with the account's admin token, for `:id`, adding the SDK-user and revenue
 * measures.
 */
export function metricsRouter({ sql, projectKeys, clickhouse }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const keyAuth = apiKeyAuth(projectKeys);
  const adminTokenAuth = adminAuth(sql);

  for (const { keyPath, adminPath, run, parameters } of OPERATIONS) {
    router.get(keyPath, keyAuth, async (ctx) => {
      const project = keyProject(ctx);
      ctx.body = await run(clickhouse, { projectId: project.id, plan: project.plan, surface: 'key' }, metricsQuery(ctx, parameters));
    });
    router.get(adminPath, adminTokenAuth, async (ctx) => {
      const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
      ctx.body = await run(clickhouse, { projectId: project.id, plan: project.plan, surface: 'admin' }, metricsQuery(ctx, parameters));
    });
  }
  return router;
}
