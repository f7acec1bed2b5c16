import { randomUUID } from 'node:crypto';
import { batchInsertSettings } from '../../src/olap/tables/insert-settings.js';
import { chTime } from '../../src/olap/time.js';
import type { TestServer } from './server.js';

/** A recognisable marker on every row of the "foreign" project: no tenant query may return it. */
export const FOREIGN_MARKER = 'FOREIGN';
const DAY_MS = 24 * 3600 * 1000;

/**
 * Writes analytics rows of one project straight into ClickHouse: events (which feed the rollups
 * events_daily and events_hourly through their materialized views) and facts. `marker` goes into
 * every user id, event property and fact category, so its rows can be recognised in any output.
 * Recent rows are an hour old; `old` rows 100 days old (outside every Free/Pro window).
 */
export async function seedAnalytics(
  server: TestServer,
  projectId: string,
  marker: string,
  options: { customEvent?: string } = {},
): Promise<{ eventIds: string[]; factIds: number[] }> {
  const now = Date.now();
  const recent = new Date(now - 3600 * 1000);
  const old = new Date(now - 100 * DAY_MS);
  const rows = [
    { name: 'feedback_list', user: `${marker}-user-1`, at: recent },
    { name: 'submit_feedback', user: `${marker}-user-2`, at: recent },
    { name: options.customEvent ?? `${marker}_custom`, user: `${marker}-user-1`, at: recent },
    { name: 'feedback_list', user: `${marker}-old`, at: old },
  ].map((row) => ({
    project_id: projectId,
    created_at: chTime(row.at),
    event_id: randomUUID(),
    event_name: row.name,
    user_id: row.user,
    properties: { secret: `${marker}-prop` },
    properties_raw: JSON.stringify({ secret: `${marker}-prop` }),
    received_at: chTime(row.at),
  }));
  // As the service inserts: synchronously, under a token of this batch (the chDB connection keeps settings).
  await server.clickhouse.insert({
    table: 'events',
    values: rows,
    format: 'JSONEachRow',
    clickhouse_settings: batchInsertSettings(randomUUID()),
  });
  const base = Math.floor(Math.random() * 1e9) + 1e9;
  const facts = [
    { kind: 'vote_added', at: recent, id: base },
    { kind: 'feedback_created', at: recent, id: base + 1 },
    { kind: 'vote_added', at: old, id: base + 2 },
  ].map((fact) => ({
    project_id: projectId,
    kind: fact.kind,
    occurred_at: chTime(fact.at),
    fact_id: fact.id,
    feedback_id: randomUUID(),
    user_id: `${marker}-user-1`,
    category: `${marker}-category`,
    status: 'pending',
    previous_status: '',
    merged_into_id: null,
    comment_id: null,
    is_admin: false,
    mrr: null,
    first_seen_at: null,
  }));
  await server.clickhouse.insert({
    table: 'facts',
    values: facts,
    format: 'JSONEachRow',
    clickhouse_settings: batchInsertSettings(randomUUID()),
  });
  return { eventIds: rows.map((row) => row.event_id), factIds: facts.map((fact) => fact.fact_id) };
}
