import { assembleDigest, type DigestContent, weekStartOf } from '../core/digest.js';
import type { Logger } from '../core/logger.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import { statusChanges, weekActivity } from '../olap/metrics/digest.queries.js';
import type { Sql } from '../oltp/db.js';
import {
  type DigestProject,
  digestFeedback,
  digestItems,
  firedAlerts,
  projectsDueForDigest,
  recordDigestRun,
} from '../oltp/digest.repo.js';
import { enqueueDigest } from '../oltp/digest-notifications.js';
import { DrainLoop } from './drain-loop.js';

const DAY_MS = 24 * 3600 * 1000;
/** How often the scheduler looks for digests due: Monday's digests go out within this time. */
const INTERVAL_MS = 60_000;

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The digest of a project for the days from `weekStart` (a Monday) up to `until` (the next Monday
 * for a whole week; now for the week so far): what GET /projects/:id/digest/preview answers and
 * the Monday email says.
 */
export async function computeDigest(
  sql: Sql,
  clickhouse: ClickHouseClient,
  project: DigestProject,
  weekStart: Date,
  until: Date,
): Promise<DigestContent> {
  const weekEnd = new Date(weekStart.getTime() + 7 * DAY_MS);
  const end = until < weekEnd ? until : weekEnd;
  const lastDay = new Date(Math.max(end.getTime() - 1, weekStart.getTime()));
  const target = {
    projectId: project.id,
    plan: project.plan,
    surface: 'admin' as const,
    sessionTimeoutMinutes: project.session_timeout_minutes,
  };
  const [feedback, changes, activity, alerts] = await Promise.all([
    digestFeedback(sql, project.id, weekStart, end),
    statusChanges(clickhouse, project.id, weekStart, end),
    weekActivity(clickhouse, target, weekStart, lastDay),
    firedAlerts(sql, project.id, weekStart, end),
  ]);
  const items = await digestItems(
    sql,
    project.id,
    changes.map((change) => change.feedback_id),
  );
  return assembleDigest({
    project: { id: project.id, name: project.name },
    week: { date_from: isoDay(weekStart), date_to: isoDay(lastDay), complete: end.getTime() === weekEnd.getTime() },
    feedback,
    changes,
    items,
    activity,
    alerts,
  });
}

/**
 * Sends each project's weekly digest once, on Monday (UTC), for the week before
 * (docs/notifications.md "The weekly digest"). Every worker process runs one: the digest's run row
 * (project, week) is written in the transaction that hands the emails to the notifications, and
 * only one process can write it. After a stop, the week that ended last is sent when the workers
 * are back (not older ones). `now` is the clock: the wall clock in service, a test's own in tests.
 */
export class DigestScheduler {
  readonly #loop: DrainLoop;
  #stopping = false;

  constructor(
    private readonly sql: Sql,
    private readonly clickhouse: ClickHouseClient,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
    options: { intervalMs?: number } = {},
  ) {
    this.#loop = new DrainLoop(() => this.runOnce(), logger, {
      intervalMs: options.intervalMs ?? INTERVAL_MS,
      failure: 'weekly digest failed',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    this.#stopping = true;
    return this.#loop.stop();
  }

  /** Sends the digests of the week that ended last that no process sent yet; answers the projects this process sent. */
  async runOnce(): Promise<string[]> {
    const thisWeek = weekStartOf(this.now());
    const weekStart = new Date(thisWeek.getTime() - 7 * DAY_MS);
    const week = isoDay(weekStart);
    const sent: string[] = [];
    const tried = new Set<string>();
    while (!this.#stopping) {
      const due = (await projectsDueForDigest(this.sql, week, thisWeek, 50)).filter((project) => !tried.has(project.id));
      if (due.length === 0) break;
      for (const project of due) {
        tried.add(project.id);
        try {
          const content = await computeDigest(this.sql, this.clickhouse, project, weekStart, thisWeek);
          const recorded = await this.sql.begin(async (tx) => {
            if (!(await recordDigestRun(tx, project.id, week, content))) return false;
            await enqueueDigest(tx, project.id, content);
            return true;
          });
          if (recorded) sent.push(project.id);
        } catch (error) {
          this.logger.warn({ err: error, projectId: project.id, week }, 'weekly digest failed, will retry');
        }
      }
    }
    if (sent.length > 0) this.logger.info({ projects: sent.length, week }, 'weekly digests sent');
    return sent;
  }
}
