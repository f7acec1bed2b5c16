import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import { type ClickHouseClient, createClickHouse } from '../../src/olap/clickhouse.js';
import { funnel } from '../../src/olap/insights/funnel.queries.js';
import { paths } from '../../src/olap/insights/paths.queries.js';
import { retention } from '../../src/olap/insights/retention.queries.js';
import { CLICKHOUSE_MIGRATIONS_DIR, migrateClickHouse } from '../../src/olap/migrations.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { stopWhenDone } from '../helpers/lifecycle.js';

/**
 * `events_by_user`, the events in (project, user, time) order (sql/clickhouse/009, docs/clickhouse.md):
 * the migration copies the events stored before it, the view copies every later insert, and the
 * funnel, retention and paths queries read it, grouped by user with a hash aggregation (in order
 * measured slower and heavier on chDB 3.4: docs/clickhouse.md).
 */
let dataDir: string;
let migrationsUpTo008: string;
let client: ClickHouseClient;
/** A project whose events were stored before migration 009 ran. */
const before = randomUUID();
let applied: string[];

// One chDB data directory per process: migrated to 008, given events, then migrated to the end.
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'events-by-user-'));
  migrationsUpTo008 = await mkdtemp(path.join(tmpdir(), 'migrations-008-'));
  stopWhenDone(() => rm(dataDir, { recursive: true, force: true }));
  stopWhenDone(() => rm(migrationsUpTo008, { recursive: true, force: true }));
  client = createClickHouse({ url: undefined, dataDir });
  stopWhenDone(() => client.close());
  for (const name of (await readdir(CLICKHOUSE_MIGRATIONS_DIR)).filter((n) => /^00[1-8]_.*\.sql$/.test(n))) {
    await copyFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, name), path.join(migrationsUpTo008, name));
  }
  await migrateClickHouse(client, { dir: migrationsUpTo008 });
  await insertEvents(
    client,
    [event(before, 'u2', 'b', '2026-03-02T10:00:00.000Z'), event(before, 'u1', 'a', '2026-03-02T11:00:00.000Z')],
    randomUUID(),
  );
  applied = await migrateClickHouse(client);
});

const event = (projectId: string, user: string, name: string, at: string): IngestEvent => ({
  project_id: projectId,
  event_id: randomUUID(),
  event_name: name,
  user_id: user,
  properties: { plan: 'pro' },
  created_at: at,
  received_at: at,
  id_from_client: false,
});

const rowsOf = async (client: ClickHouseClient, projectId: string) => {
  const result = await client.query({
    query: `SELECT user_id, toString(created_at) AS at, event_name, properties_raw FROM events_by_user
            WHERE project_id = {p:UUID} ORDER BY user_id, created_at, event_name`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  return result.json();
};

describe('events_by_user', () => {
  it('is backfilled by its migration from the events stored before it, then fed by every insert', async () => {
    expect(applied).toContain('009_events_by_user.sql');
    expect(await rowsOf(client, before)).toEqual([
      { user_id: 'u1', at: '2026-03-02 11:00:00.000', event_name: 'a', properties_raw: '{"plan":"pro"}' },
      { user_id: 'u2', at: '2026-03-02 10:00:00.000', event_name: 'b', properties_raw: '{"plan":"pro"}' },
    ]);
    await insertEvents(client, [event(before, 'u1', 'c', '2026-03-01T09:00:00.000Z')], randomUUID());
    expect(await rowsOf(client, before)).toHaveLength(3);
  });

  it('holds user_key, sipHash128(user_id) as a number, written into the parts stored before migration 010 and into every later insert', async () => {
    expect(applied).toContain('010_events_by_user_key.sql');
    const keys = await client.query({
      query: `SELECT user_id, toString(user_key) AS key, toString(reinterpretAsUInt128(sipHash128(user_id))) AS hash
              FROM events_by_user WHERE project_id = {p:UUID} ORDER BY user_id, created_at`,
      query_params: { p: before },
      format: 'JSONEachRow',
    });
    const rows = await keys.json<{ user_id: string; key: string; hash: string }>();
    expect(rows.map((row) => row.user_id)).toEqual(['u1', 'u1', 'u2']);
    for (const row of rows) expect(row.key).toBe(row.hash);
    expect(rows[0]?.key).not.toBe(rows[2]?.key);
    // Every active part has the column on disk (MATERIALIZE COLUMN rewrote the older ones), so no
    // read computes it again.
    const parts = await client.query({
      query: `SELECT count() AS parts, countIf(has(columns, 'user_key')) AS with_key
              FROM (SELECT name, groupArray(column) AS columns FROM system.parts_columns
                    WHERE active AND database = currentDatabase() AND table = 'events_by_user' GROUP BY name)`,
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
    });
    const [count] = await parts.json<{ parts: number; with_key: number }>();
    expect(count?.parts).toBeGreaterThan(0);
    expect(count?.with_key).toBe(count?.parts);
  });

  it('is read by the funnel, retention and paths queries, grouped by user with a hash aggregation (not in order)', async () => {
    const real = client;
    const projectId = randomUUID();
    await insertEvents(
      real,
      [
        event(projectId, 'u1', 'a', '2026-03-02T10:00:00.000Z'),
        event(projectId, 'u1', 'b', '2026-03-02T11:00:00.000Z'),
        event(projectId, 'u2', 'a', '2026-03-03T10:00:00.000Z'),
      ],
      randomUUID(),
    );
    // Every query the three functions send, with its parameters and settings.
    const sent: Parameters<ClickHouseClient['query']>[0][] = [];
    const recording = {
      query: (params: Parameters<ClickHouseClient['query']>[0]) => {
        sent.push(params);
        return real.query(params);
      },
    } as unknown as ClickHouseClient;
    const scope = { projectId, start: new Date('2026-03-01T00:00:00Z'), end: new Date('2026-03-10T00:00:00Z'), names: null };
    const funnelAnswer = await funnel(recording, scope, { steps: [{ eventName: 'a' }, { eventName: 'b' }], windowMs: 86_400_000 });
    expect(funnelAnswer[0]?.users).toEqual([2, 1]);
    await retention(recording, scope, { interval: 'day', periods: 2 });
    expect((await paths(recording, scope, { depth: 3 })).paths).toEqual([
      { events: ['a'], users: 1 },
      { events: ['a', 'b'], users: 1 },
    ]);
    expect(sent).toHaveLength(3);
    for (const params of sent) {
      expect(params.query).toContain('FROM events_by_user');
      const plan = await real.query({
        query: `EXPLAIN PIPELINE ${params.query}`,
        query_params: params.query_params,
        clickhouse_settings: params.clickhouse_settings,
        format: 'TabSeparatedRaw',
      });
      const text = await plan.text();
      // The GROUP BY user is hashed: aggregation in order cost 3x the time and memory (docs/clickhouse.md).
      expect(text, params.query).toContain('AggregatingTransform');
      expect(text, params.query).not.toContain('AggregatingInOrderTransform');
    }
  });
});
