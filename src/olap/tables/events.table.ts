import type { IngestEvent } from '../../core/event.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { batchInsertSettings } from './insert-settings.js';
import { clickhouseTimeToIso } from '../time.js';

/**
 * Inserts one batch of events. `token` becomes the insert_deduplication_token: a batch retried
 * with the same token (a job re-run after a crash) is dropped by ClickHouse instead of stored twice.
 */
export async function insertEvents(client: ClickHouseClient, events: IngestEvent[], token: string): Promise<void> {
  if (events.length === 0) return;
  await client.insert({
    table: 'events',
    format: 'JSONEachRow',
    values: events.map((event) => ({
      project_id: event.project_id,
      created_at: event.created_at,
      event_id: event.event_id,
      event_name: event.event_name,
      user_id: event.user_id,
      properties: event.properties ?? {},
      properties_raw: event.properties === null ? '' : JSON.stringify(event.properties),
      received_at: event.received_at,
    })),
    clickhouse_settings: batchInsertSettings(token),
  });
}

type StoredEventRow = {
  project_id: string;
  event_id: string;
  event_name: string;
  user_id: string;
  properties_raw: string;
  created_at: string;
  received_at: string;
};

/**
 * The stored events among `ids` (client event ids), per project. Used to make client retries
 * idempotent; the bloom filter index on event_id keeps this from scanning whole projects.
 */
export async function findStoredEvents(client: ClickHouseClient, projectIds: string[], eventIds: string[]): Promise<IngestEvent[]> {
  if (eventIds.length === 0) return [];
  const result = await client.query({
    query: `
      SELECT project_id, event_id, any(event_name) AS event_name, any(user_id) AS user_id,
             any(properties_raw) AS properties_raw, min(created_at) AS created_at, min(received_at) AS received_at
      FROM events
      WHERE project_id IN {projectIds:Array(UUID)} AND event_id IN {eventIds:Array(UUID)}
      GROUP BY project_id, event_id`,
    query_params: { projectIds, eventIds },
    format: 'JSONEachRow',
  });
  const rows = await result.json<StoredEventRow>();
  return rows.map((row) => ({
    project_id: row.project_id,
    event_id: row.event_id,
    event_name: row.event_name,
    user_id: row.user_id,
    properties: row.properties_raw === '' ? null : (JSON.parse(row.properties_raw) as Record<string, unknown>),
    created_at: clickhouseTimeToIso(row.created_at),
    received_at: clickhouseTimeToIso(row.received_at),
    id_from_client: true,
  }));
}
