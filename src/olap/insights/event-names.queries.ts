import type { ClickHouseClient } from '../clickhouse.js';
import { chTime, type InsightScope, queryRows } from './query-rows.js';

export type EventNameRow = { event_name: string; event_count: number };

/**
 * The event names tracked in the window with their counts, most tracked first, from the daily
 * rollup (the window is whole UTC days), within the plan's event scope.
 */
export async function eventNames(client: ClickHouseClient, scope: InsightScope, limit: number): Promise<EventNameRow[]> {
  const rows = await queryRows<EventNameRow>(
    client,
    `SELECT toString(event_name) AS event_name, sum(events) AS event_count
     FROM events_daily
     WHERE project_id = {projectId:UUID}
       AND day >= toDate({start:DateTime64(3, 'UTC')}) AND day < toDate({end:DateTime64(3, 'UTC')})
       ${scope.names === null ? '' : 'AND event_name IN {scopeNames:Array(String)}'}
     GROUP BY event_name
     ORDER BY event_count DESC, event_name
     LIMIT {limit:UInt32}`,
    { projectId: scope.projectId, start: chTime(scope.start), end: chTime(scope.end), scopeNames: scope.names ?? [], limit },
  );
  return rows.map((row) => ({ event_name: row.event_name, event_count: Number(row.event_count) }));
}
