import { PLAN_LIMITS } from '../../core/plans.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import { resolveWindow } from '../../olap/metrics/window.js';
import type { TenantScope } from '../../olap/readonly/project-query.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { badRequest } from '../errors.js';

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
 * The plan's narrowing, as the metrics API applies it (SPEC 8.3): the window defaults to the
 * plan's whole allowance ending today and is clamped to it; below Pro only the predefined event
 * names are readable (in events and the rollups; facts are not events).
 */
export function projectSqlScope(
  project: Pick<ProjectWithPlan, 'id' | 'plan'>,
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
