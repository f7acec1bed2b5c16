import { assembleDigest, type DigestContent } from '../../core/digest.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { statusChanges, weekActivity } from '../../olap/metrics/digest.queries.js';
import type { Sql } from '../../oltp/db.js';
import { digestFeedback, digestItems, firedAlerts } from '../../oltp/digest.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';

const DAY_MS = 24 * 3600 * 1000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The digest of the week so far (from `weekStart`, a Monday, until `now`), from the same parts as
 * the worker's Monday digest (src/workers/digest.scheduler.ts, computeDigest, which the API may not
 * import): the same repositories, queries and assembly.
 */
export async function digestSoFar(
  sql: Sql,
  clickhouse: ClickHouseClient,
  project: ProjectWithPlan,
  weekStart: Date,
  now: Date,
): Promise<DigestContent> {
  const lastDay = new Date(Math.max(now.getTime() - 1, weekStart.getTime()));
  const target = {
    projectId: project.id,
    plan: project.plan,
    surface: 'admin' as const,
    sessionTimeoutMinutes: project.session_timeout_minutes,
  };
  const [feedback, changes, activity, alerts] = await Promise.all([
    digestFeedback(sql, project.id, weekStart, now),
    statusChanges(clickhouse, project.id, weekStart, now),
    weekActivity(clickhouse, target, weekStart, lastDay),
    firedAlerts(sql, project.id, weekStart, now),
  ]);
  const items = await digestItems(
    sql,
    project.id,
    changes.map((change) => change.feedback_id),
  );
  return assembleDigest({
    project: { id: project.id, name: project.name },
    week: { date_from: isoDay(weekStart), date_to: isoDay(lastDay), complete: now.getTime() >= weekStart.getTime() + 7 * DAY_MS },
    feedback,
    changes,
    items,
    activity,
    alerts,
  });
}
