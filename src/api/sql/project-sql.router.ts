import { Router } from '@koa/router';
import { MetricsError } from '../metrics/metrics.errors.js';
import { PREDEFINED_EVENTS } from '../metrics/measures.js';
import { resolveWindow } from '../metrics/window.js';
import { createProjectQueries, ProjectQueryBusy, ProjectQueryRefused, type TenantScope } from '../../olap/project-query.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest } from '../errors.js';
import { ProjectSqlBody } from './project-sql.schema.js';
import type { AppState } from '../state.js';
import { answerSqlResult } from './sql-result-body.js';
import { parseBody } from '../validation.js';

const DAY_MS = 24 * 3600 * 1000;

/** What a project query was allowed to see, echoed in its response as the metrics API does (SPEC 2.8). */
export type ProjectSqlEcho = {
  event_scope: 'all' | 'predefined_only';
  retention_clamped: boolean;
  retention_window_days: number;
  date_from: string;
  date_to: string;
};

/**
 * POST /projects/:id/sql (admin token of the owning account, or a member's): one read-only
 * ClickHouse query over events, facts, events_daily and events_hourly that sees only this
 * project's rows inside the plan's window and event scope, enforced by the engine
 * (docs/project-sql.md). 400 for a refused or failed query, 429 with Retry-After when the
 * account or the service runs too many at once.
 */
export function projectSqlRouter({ sql, clickhouse, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const queries = createProjectQueries({
    clickhouse,
    clickhouseUrl: config.clickhouseUrl,
    dataDir: config.dataDir,
    timeoutMs: config.projectSql.timeoutMs,
    maxMemoryBytes: config.projectSql.maxMemoryBytes,
    accountConcurrency: config.projectSql.accountConcurrency,
  });
  router.post('/projects/:id/sql', adminAuth(sql), async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const body = parseBody(ProjectSqlBody, ctx.request.body);
    const { scope, echo } = projectSqlScope(project, body);
    try {
      const result = await queries.run(project.account_id, scope, body.query, body.params);
      answerSqlResult(ctx, result, echo);
    } catch (error) {
      if (error instanceof ProjectQueryRefused) throw badRequest(`query: ${error.message}`);
      if (error instanceof ProjectQueryBusy) {
        throw new AppError(429, `query: ${error.message}`, { 'Retry-After': String(error.retryAfterSeconds) });
      }
      throw error;
    }
  });
  return router;
}

/**
 * The plan's narrowing, as the metrics API applies it (SPEC 8.3): the window defaults to the
 * plan's whole allowance ending today and is clamped to it; below Pro only the predefined event
 * names are readable (in events and the rollups; facts are not events).
 */
export function projectSqlScope(
  project: ProjectWithPlan,
  body: { dateFrom?: string | undefined; dateTo?: string | undefined },
  now = new Date(),
): { scope: TenantScope; echo: ProjectSqlEcho } {
  const allowance = PLAN_LIMITS[project.plan].metricsWindowDays;
  let window: ReturnType<typeof resolveWindow>;
  try {
    const dateTo = body.dateTo ?? now.toISOString().slice(0, 10);
    const to = Date.parse(`${dateTo}T00:00:00Z`);
    if (Number.isNaN(to)) throw badRequest('date_to must be a date as YYYY-MM-DD');
    const dateFrom = body.dateFrom ?? new Date(to - (allowance - 1) * DAY_MS).toISOString().slice(0, 10);
    window = resolveWindow({ date_from: dateFrom, date_to: dateTo }, project.plan, now);
  } catch (error) {
    if (error instanceof MetricsError) throw badRequest(error.message);
    throw error;
  }
  const allNames = PLAN_LIMITS[project.plan].customEventsReadable;
  return {
    scope: { projectId: project.id, start: window.start, end: window.end, eventNames: allNames ? null : PREDEFINED_EVENTS },
    echo: {
      event_scope: allNames ? 'all' : 'predefined_only',
      retention_clamped: window.retentionClamped,
      retention_window_days: window.retentionWindowDays,
      date_from: window.dateFrom,
      date_to: window.dateTo,
    },
  };
}
