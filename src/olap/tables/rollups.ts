import { randomUUID } from 'node:crypto';
import { type ClickHouseTarget, mutate } from '../mutations.js';

/**
 * Makes the rollups of `days` hold exactly what the events of those days hold: their rows are
 * deleted and computed again from `events`, as the materialized views compute them
 * (sql/clickhouse/004 and 006). Events inserted while this runs feed the rollups through the views
 * and may also be read by the recomputation, so the result is checked against the events in one
 * query and the rebuild repeated until they agree (at most `attempts` times; then it throws and
 * the job retries later).
 */
export async function rebuildRollups(target: ClickHouseTarget, projectId: string, days: string[], attempts = 5): Promise<void> {
  if (days.length === 0) return;
  if (target.cluster) throw new Error('rebuilding the rollups needs a single ClickHouse server: on a cluster each shard holds its own');
  const params = { projectId, days };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await mutate(target, 'events_daily', 'DELETE WHERE project_id = {projectId:UUID} AND day IN {days:Array(Date)}', params);
    await mutate(target, 'events_hourly', 'DELETE WHERE project_id = {projectId:UUID} AND toDate(hour) IN {days:Array(Date)}', params);
    await insertSelect(
      target,
      `INSERT INTO events_daily (project_id, day, event_name, events, users)
       SELECT project_id, toDate(created_at, 'UTC') AS day, event_name, count() AS events, uniqExactState(user_id) AS users
       FROM events
       WHERE project_id = {projectId:UUID} AND toDate(created_at, 'UTC') IN {days:Array(Date)}
       GROUP BY project_id, day, event_name`,
      params,
    );
    await insertSelect(
      target,
      `INSERT INTO events_hourly (project_id, hour, event_name, events, users)
       SELECT project_id, toStartOfHour(created_at, 'UTC') AS hour, event_name, count() AS events, uniqExactState(user_id) AS users
       FROM events
       WHERE project_id = {projectId:UUID} AND toDate(created_at, 'UTC') IN {days:Array(Date)}
       GROUP BY project_id, hour, event_name`,
      params,
    );
    if ((await rollupMismatches(target, projectId, days)) === 0) return;
  }
  throw new Error(`the rollups of ${days.length} day(s) still differ from the events after ${attempts} rebuilds (events kept arriving)`);
}

/** A fresh token per statement: chDB keeps an earlier insert's token for the session, which would drop this one as a duplicate. */
async function insertSelect(target: ClickHouseTarget, query: string, params: Record<string, unknown>): Promise<void> {
  await target.client.command({
    query,
    query_params: params,
    clickhouse_settings: { async_insert: 0, insert_deduplicate: 1, insert_deduplication_token: `rollup-rebuild:${randomUUID()}` },
  });
}

/** Rollup rows (daily and hourly) of `days` whose count or exact unique users differ from the events. */
export async function rollupMismatches(target: ClickHouseTarget, projectId: string, days: string[]): Promise<number> {
  const result = await target.client.query({
    query: `
      SELECT
        (SELECT count() FROM (
           SELECT day, event_name, sum(events) AS n, uniqExactMerge(users) AS u FROM events_daily
           WHERE project_id = {projectId:UUID} AND day IN {days:Array(Date)} GROUP BY day, event_name) AS r
         FULL OUTER JOIN (
           SELECT toDate(created_at, 'UTC') AS day, event_name, count() AS n, uniqExact(user_id) AS u FROM events
           WHERE project_id = {projectId:UUID} AND toDate(created_at, 'UTC') IN {days:Array(Date)} GROUP BY day, event_name) AS s
         USING (day, event_name)
         WHERE r.n != s.n OR r.u != s.u)
        +
        (SELECT count() FROM (
           SELECT hour, event_name, sum(events) AS n, uniqExactMerge(users) AS u FROM events_hourly
           WHERE project_id = {projectId:UUID} AND toDate(hour) IN {days:Array(Date)} GROUP BY hour, event_name) AS r
         FULL OUTER JOIN (
           SELECT toStartOfHour(created_at, 'UTC') AS hour, event_name, count() AS n, uniqExact(user_id) AS u FROM events
           WHERE project_id = {projectId:UUID} AND toDate(created_at, 'UTC') IN {days:Array(Date)} GROUP BY hour, event_name) AS s
         USING (hour, event_name)
         WHERE r.n != s.n OR r.u != s.u) AS mismatches`,
    query_params: { projectId, days },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  const [row] = await result.json<{ mismatches: number }>();
  return Number(row?.mismatches ?? 0);
}
