import type { ClickHouseClient } from '../clickhouse.js';
import { queryRows } from '../query-rows.js';
import { chTime, clickhouseTimeToIso } from '../time.js';
import { type MetricsTarget, summary } from './metrics.planner.js';

/** One item whose status changed in the span: its latest status then, the status before the span's first change. */
export type StatusChangeRow = { feedback_id: string; status: string; previous_status: string; changes: number; changed_at: string };

/**
 * The project's items whose status changed in [start, end), from the facts (the PostgreSQL changes
 * relayed to ClickHouse): per item the last status set in the span, the status it had before the
 * span's first change, how many changes, and when the last one was. Latest change first.
 */
export async function statusChanges(client: ClickHouseClient, projectId: string, start: Date, end: Date): Promise<StatusChangeRow[]> {
  const rows = await queryRows<StatusChangeRow>(
    client,
    `SELECT toString(feedback_id) AS feedback_id,
            argMax(status, (occurred_at, fact_id)) AS status,
            argMin(previous_status, (occurred_at, fact_id)) AS previous_status,
            count() AS changes,
            toString(max(occurred_at)) AS changed_at
     FROM facts
     WHERE project_id = {projectId:UUID} AND kind = 'feedback_status_changed' AND feedback_id IS NOT NULL
       AND occurred_at >= {start:DateTime64(6, 'UTC')} AND occurred_at < {end:DateTime64(6, 'UTC')}
     GROUP BY feedback_id
     ORDER BY max(occurred_at) DESC, feedback_id`,
    { projectId, start: chTime(start), end: chTime(end) },
  );
  return rows.map((row) => ({ ...row, changes: Number(row.changes), changed_at: clickhouseTimeToIso(row.changed_at) }));
}

/** A measure of the digest against the same span one week earlier. */
export type WeekOverWeek = { value: number; previous: number; change: number | null };

export type DigestActivity = { events: WeekOverWeek; unique_users: WeekOverWeek; sessions: WeekOverWeek };

const isoDay = (date: Date) => date.toISOString().slice(0, 10);
const WEEK_MS = 7 * 24 * 3600 * 1000;

/**
 * Events, unique users and sessions of the days [first, last] and of the same days one week
 * earlier: two GET /projects/:id/metrics/summary requests (measures event_count,
 * unique_event_users, sessions), with the plan's scope as the metrics API applies it. For a whole
 * week (Monday to Sunday) the earlier one is the week before.
 */
export async function weekActivity(client: ClickHouseClient, target: MetricsTarget, first: Date, last: Date): Promise<DigestActivity> {
  const measures = ['event_count', 'unique_event_users', 'sessions'] as const;
  const ask = (from: Date, to: Date) =>
    summary(client, target, { date_from: isoDay(from), date_to: isoDay(to), measures: [...measures] }).then(
      (answer) => answer.measures as Record<string, number | null | undefined>,
    );
  const [now, before] = await Promise.all([ask(first, last), ask(new Date(first.getTime() - WEEK_MS), new Date(last.getTime() - WEEK_MS))]);
  const pair = (measure: string): WeekOverWeek => {
    const value = Number(now[measure] ?? 0);
    const previous = Number(before[measure] ?? 0);
    return { value, previous, change: previous === 0 ? null : (value - previous) / previous };
  };
  return { events: pair('event_count'), unique_users: pair('unique_event_users'), sessions: pair('sessions') };
}
