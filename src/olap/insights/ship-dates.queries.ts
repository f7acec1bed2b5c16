import type { ClickHouseClient } from '../clickhouse.js';
import { chTime, queryRows } from './query-rows.js';

export type ShipDateRow = { feedback_id: string; shipped: string };

/**
 * The project's items whose latest status is `completed` and whose last completion falls in
 * [start, end), with that time (ClickHouse DateTime64(6) text): the reading of impact's
 * `shippedAt`, for every item at once. Oldest first.
 */
export async function shipDates(client: ClickHouseClient, projectId: string, start: Date, end: Date): Promise<ShipDateRow[]> {
  return queryRows<ShipDateRow>(
    client,
    `SELECT toString(feedback_id) AS feedback_id, toString(shipped_at) AS shipped
     FROM (
       SELECT feedback_id,
              argMax(status, (occurred_at, fact_id)) AS latest,
              maxIf(occurred_at, kind = 'feedback_status_changed' AND status = 'completed') AS shipped_at
       FROM facts
       WHERE project_id = {projectId:UUID} AND feedback_id IS NOT NULL
         AND kind IN ('feedback_created', 'feedback_status_changed')
       GROUP BY feedback_id
     )
     WHERE latest = 'completed'
       AND shipped_at >= {start:DateTime64(6, 'UTC')} AND shipped_at < {end:DateTime64(6, 'UTC')}
     ORDER BY shipped_at, feedback_id`,
    { projectId, start: chTime(start), end: chTime(end) },
  );
}
