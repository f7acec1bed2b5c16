import type { ClickHouseClient } from '../clickhouse.js';
import { type InsightScope, queryRows, scopeCondition, scopeParams } from './query-rows.js';

/**
 * When a feedback item last became `completed` (ClickHouse DateTime64(6) text), from the facts
 * relayed from PostgreSQL: null unless its latest status (by commit time, then fact id) is `completed`.
 */
export async function shippedAt(client: ClickHouseClient, projectId: string, feedbackId: string): Promise<string | null> {
  const [row] = await queryRows<{ latest: string; shipped: string }>(
    client,
    `SELECT argMax(status, (occurred_at, fact_id)) AS latest,
            toString(maxIf(occurred_at, kind = 'feedback_status_changed' AND status = 'completed')) AS shipped
     FROM facts
     WHERE project_id = {projectId:UUID} AND feedback_id = {feedbackId:UUID}
       AND kind IN ('feedback_created', 'feedback_status_changed')`,
    { projectId, feedbackId },
  );
  if (row?.latest !== 'completed') return null;
  return row.shipped;
}

export type ImpactSpan = { users: number; events: number };

export type ImpactCounts = {
  before: ImpactSpan;
  after: ImpactSpan & {
    /** Distinct users with any event (in scope) after the ship time. */
    active_users: number;
  };
  /** The linked events' users after the ship time who are among `voters`. */
  voters_adopted: string[];
};

/**
 * The linked events before and after the ship time (both within the scope's range), and the
 * voters among the users of the linked events after it.
 */
export async function impactCounts(
  client: ClickHouseClient,
  scope: InsightScope,
  input: { shipped: string; eventNames: readonly string[]; voters: readonly string[] },
): Promise<ImpactCounts> {
  const [row] = await queryRows<{
    before_users: number;
    before_events: number;
    after_users: number;
    after_events: number;
    active_users: number;
    voters_adopted: string[];
  }>(
    client,
    `SELECT uniqExactIf(user_id, linked AND NOT after) AS before_users,
            countIf(linked AND NOT after) AS before_events,
            uniqExactIf(user_id, linked AND after) AS after_users,
            countIf(linked AND after) AS after_events,
            uniqExactIf(user_id, after) AS active_users,
            arraySort(groupUniqArrayIf(user_id, linked AND after AND has({voters:Array(String)}, user_id))) AS voters_adopted
     FROM (
       SELECT user_id, event_name IN {names:Array(String)} AS linked, created_at >= {shipped:DateTime64(6, 'UTC')} AS after
       FROM events
       WHERE ${scopeCondition(scope)}
     )`,
    { ...scopeParams(scope), names: input.eventNames, voters: input.voters, shipped: input.shipped },
  );
  return {
    before: { users: Number(row?.before_users ?? 0), events: Number(row?.before_events ?? 0) },
    after: {
      users: Number(row?.after_users ?? 0),
      events: Number(row?.after_events ?? 0),
      active_users: Number(row?.active_users ?? 0),
    },
    voters_adopted: row?.voters_adopted ?? [],
  };
}

export type ImpactDayRow = { date: string; users: number; events: number };

/** The linked events per UTC day of the scope's range (days without any are absent). */
export async function impactSeries(client: ClickHouseClient, scope: InsightScope, eventNames: readonly string[]): Promise<ImpactDayRow[]> {
  const rows = await queryRows<ImpactDayRow>(
    client,
    `SELECT toString(toDate(created_at, 'UTC')) AS date, uniqExact(user_id) AS users, count() AS events
     FROM events
     WHERE ${scopeCondition(scope)} AND event_name IN {names:Array(String)}
     GROUP BY date`,
    { ...scopeParams(scope), names: eventNames },
  );
  return rows.map((row) => ({ date: row.date, users: Number(row.users), events: Number(row.events) }));
}
