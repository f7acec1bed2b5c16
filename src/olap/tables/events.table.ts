import { Readable } from 'node:stream';
import type { IngestEvent } from '../../core/event.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { clickhouseTimeToIso, isoToClickhouseTime } from '../time.js';
import { batchInsertSettings } from './insert-settings.js';

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

/**
 * One event as a line of the JSONEachRow insert into `events`, newline included: the very row
 * insertEvents sends, plus `id_from_client` for the embedded log's own use (the insert skips it,
 * input_format_skip_unknown_fields). The embedded ingest log stores events as these lines, so its
 * shipper inserts ranges of them as they are: no parse, no re-encode (issue 31). Written as text:
 * the ids and times are the service's own UUIDs and ISO strings; names, user ids and properties
 * go through JSON.stringify, as in insertEvents.
 */
export function eventRowLine(event: IngestEvent): string {
  const raw = event.properties === null ? '' : JSON.stringify(event.properties);
  return (
    `{"project_id":"${event.project_id}","created_at":"${event.created_at}","event_id":"${event.event_id}",` +
    `"event_name":${JSON.stringify(event.event_name)},"user_id":${JSON.stringify(event.user_id)},` +
    `"properties":${raw === '' ? '{}' : raw},"properties_raw":${JSON.stringify(raw)},` +
    `"received_at":"${event.received_at}","id_from_client":${event.id_from_client}}\n`
  );
}

/** A row line as eventRowLine writes it (without its newline), read back into the event. */
export function eventFromRowLine(line: string): IngestEvent {
  const row = JSON.parse(line) as {
    project_id: string;
    created_at: string;
    event_id: string;
    event_name: string;
    user_id: string;
    properties: Record<string, unknown>;
    properties_raw: string;
    received_at: string;
    id_from_client: boolean;
  };
  return {
    project_id: row.project_id,
    event_id: row.event_id,
    event_name: row.event_name,
    user_id: row.user_id,
    properties: row.properties_raw === '' ? null : row.properties,
    created_at: row.created_at,
    received_at: row.received_at,
    id_from_client: row.id_from_client,
  };
}

/**
 * Inserts row lines made by eventRowLine, as they are (the ranges of the embedded log), under
 * the same settings as insertEvents. A refusal is thrown as insertEvents throws it, so the caller
 * can find the refused rows the same way.
 */
export async function insertEventRowLines(client: ClickHouseClient, lines: Buffer[], token: string): Promise<void> {
  if (lines.length === 0) return;
  const result = await client.exec({
    query: 'INSERT INTO events FORMAT JSONEachRow',
    values: Readable.from(lines, { objectMode: false }),
    // `id_from_client` is not a column. Skipping unknown fields is the default; said here so a
    // server configured otherwise still takes the lines (the chDB settings scope resets it).
    clickhouse_settings: { ...batchInsertSettings(token), input_format_skip_unknown_fields: 1 },
  });
  // The answer of an insert is empty; read it to its end so an HTTP connection is free again.
  for await (const _ of result.stream) {
    // nothing to read
  }
}

type StoredEventRow = {
  project_id: string;
  event_id: string;
  name: string;
  user: string;
  raw: string;
  first_created_at: string;
  first_received_at: string;
};

/**
 * The stored events among `eventIds` of `projectIds` received within the last `lookbackMs`
 * (the idempotency window and then some). Used to make client retries idempotent and to drop
 * what a re-run batch already stored. Its cost is bounded by the window, not by the rows stored:
 * the ids are found in `event_ids` (two days of ids, sorted by project and id, 008_event_ids.sql)
 * and each event is then read from `events` through its sort key, by its created_at.
 */
export async function findStoredEvents(
  client: ClickHouseClient,
  projectIds: string[],
  eventIds: string[],
  lookbackMs: number,
  now = Date.now(),
): Promise<IngestEvent[]> {
  if (eventIds.length === 0) return [];
  const since = new Date(now - lookbackMs).toISOString();
  const ids = await client.query({
    query: `
      SELECT DISTINCT toString(created_at) AS created_at
      FROM event_ids
      WHERE received_at >= parseDateTime64BestEffort({since:String}, 3, 'UTC')
        AND project_id IN {projectIds:Array(UUID)} AND event_id IN {eventIds:Array(UUID)}`,
    query_params: { since, projectIds, eventIds },
    format: 'JSONEachRow',
  });
  const times = (await ids.json<{ created_at: string }>()).map((row) => row.created_at);
  if (times.length === 0) return [];
  return storedEventsAt(client, projectIds, times, eventIds);
}

/**
 * The stored events among `eventIds` of `projectIds` whose created_at is one of `times`
 * (ClickHouse DateTime64 text): found through the sort key of events, (project_id, created_at,
 * event_id), whatever the table holds.
 */
async function storedEventsAt(client: ClickHouseClient, projectIds: string[], times: string[], eventIds: string[]): Promise<IngestEvent[]> {
  const result = await client.query({
    query: `
      SELECT project_id, event_id, any(event_name) AS name, any(user_id) AS user, any(properties_raw) AS raw,
             min(created_at) AS first_created_at, min(received_at) AS first_received_at
      FROM events
      WHERE project_id IN {projectIds:Array(UUID)} AND created_at IN {times:Array(DateTime64(3, 'UTC'))}
        AND event_id IN {eventIds:Array(UUID)}
      GROUP BY project_id, event_id`,
    query_params: { projectIds, times, eventIds },
    format: 'JSONEachRow',
  });
  // Aliases other than the column names: in ClickHouse an alias would replace the column in WHERE.
  const rows = await result.json<StoredEventRow>();
  return rows.map((row) => ({
    project_id: row.project_id,
    event_id: row.event_id,
    event_name: row.name,
    user_id: row.user,
    properties: row.raw === '' ? null : (JSON.parse(row.raw) as Record<string, unknown>),
    created_at: clickhouseTimeToIso(row.first_created_at),
    received_at: clickhouseTimeToIso(row.first_received_at),
    id_from_client: true,
  }));
}

/**
 * Which of these events `events` already holds, looked up by each event's own created_at: for a
 * batch written again exactly as before (a queue job re-run), this needs nothing but the table
 * itself. The event_ids index is not asked: an insert cut by a crash can leave a row in events
 * whose index row (written by a materialized view, a separate part) never landed.
 */
export async function findEventsAsWritten(client: ClickHouseClient, events: IngestEvent[]): Promise<IngestEvent[]> {
  if (events.length === 0) return [];
  return storedEventsAt(
    client,
    [...new Set(events.map((event) => event.project_id))],
    [...new Set(events.map((event) => isoToClickhouseTime(event.created_at)))],
    [...new Set(events.map((event) => event.event_id))],
  );
}

/** The `project:event` keys among these events that the event_ids index holds. */
export async function indexedEventKeys(client: ClickHouseClient, events: IngestEvent[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const result = await client.query({
    query: `
      SELECT DISTINCT concat(toString(project_id), ':', toString(event_id)) AS key
      FROM event_ids
      WHERE project_id IN {projectIds:Array(UUID)} AND event_id IN {eventIds:Array(UUID)}`,
    query_params: {
      projectIds: [...new Set(events.map((event) => event.project_id))],
      eventIds: [...new Set(events.map((event) => event.event_id))],
    },
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ key: string }>()).map((row) => row.key));
}

/** Index rows for stored events whose own were lost (the view's part of a cut insert). */
export async function insertEventIndexRows(client: ClickHouseClient, events: IngestEvent[], token: string): Promise<void> {
  if (events.length === 0) return;
  await client.insert({
    table: 'event_ids',
    format: 'JSONEachRow',
    values: events.map((event) => ({
      project_id: event.project_id,
      event_id: event.event_id,
      created_at: event.created_at,
      received_at: event.received_at,
    })),
    clickhouse_settings: batchInsertSettings(token),
  });
}
