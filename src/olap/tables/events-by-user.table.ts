import type { IngestEvent } from '../../core/event.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { isoToClickhouseTime } from '../time.js';
import { batchInsertSettings } from './insert-settings.js';

/**
 * Makes `events_by_user` (the user-ordered copy of the events, sql/clickhouse/009, fed by a
 * materialized view) hold every stored row of these events: an insert cut between its part of
 * `events` and the view's part leaves the copy short, as it does the rollups. Rows are matched
 * on every column the copy has (the copy has no event id): for each (project, user, time, name,
 * properties) of these events, the copy gets as many rows as `events` holds. Returns how many
 * rows were added; 0 when nothing was cut. Safe to repeat. The rows are written without
 * `user_key` (sql/clickhouse/010): a MATERIALIZED column, computed by the table from user_id.
 */
export async function repairUserOrderedCopy(client: ClickHouseClient, events: IngestEvent[], token: string): Promise<number> {
  if (events.length === 0) return 0;
  const params = {
    projectIds: [...new Set(events.map((event) => event.project_id))],
    userIds: [...new Set(events.map((event) => event.user_id))],
    times: [...new Set(events.map((event) => isoToClickhouseTime(event.created_at)))],
  };
  // events is found by its sort key (project, created_at), the copy by its own (project, user).
  const where = `project_id IN {projectIds:Array(UUID)} AND user_id IN {userIds:Array(String)}
                 AND created_at IN {times:Array(DateTime64(3, 'UTC'))}`;
  const result = await client.query({
    query: `
      SELECT toString(project_id) AS project, user, toString(at) AS time, name, raw
      FROM (
        SELECT project_id, user_id AS user, created_at AS at, event_name AS name, properties_raw AS raw, count() AS stored
        FROM events WHERE ${where}
        GROUP BY project_id, user, at, name, raw
      ) AS e
      LEFT JOIN (
        SELECT project_id, user_id AS user, created_at AS at, event_name AS name, properties_raw AS raw, count() AS copied
        FROM events_by_user WHERE ${where}
        GROUP BY project_id, user, at, name, raw
      ) AS c USING (project_id, user, at, name, raw)
      ARRAY JOIN range(toUInt64(greatest(0, toInt64(stored) - toInt64(copied)))) AS missing`,
    query_params: params,
    format: 'JSONEachRow',
  });
  // Aliases other than the column names: in ClickHouse an alias would replace the column in WHERE.
  const rows = await result.json<{ project: string; user: string; time: string; name: string; raw: string }>();
  if (rows.length === 0) return 0;
  await client.insert({
    table: 'events_by_user',
    format: 'JSONEachRow',
    values: rows.map((row) => ({
      project_id: row.project,
      user_id: row.user,
      created_at: row.time,
      event_name: row.name,
      properties_raw: row.raw,
    })),
    clickhouse_settings: batchInsertSettings(token),
  });
  return rows.length;
}
