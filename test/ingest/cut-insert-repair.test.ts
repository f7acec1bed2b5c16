import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import { rollupMismatches } from '../../src/olap/tables/rollups.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * ClickHouse commits an insert's part of `events` and the parts its materialized views write
 * (event_ids, events_by_user, events_daily, events_hourly) one after the other: a crash between them leaves the
 * events stored and their dependents short (ClickHouse issue 104661). A queue job run again
 * after that crash must neither store its events twice nor leave the dependents short. The cut
 * is made here as the crash leaves it: the batch is written, then the view's rows of it are
 * deleted.
 */
describe('a re-run batch whose earlier insert was cut between its parts', () => {
  const server = useTestServer();
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server);
  });

  function batch(size: number): IngestEvent[] {
    const now = Date.now();
    return Array.from({ length: size }, (_, i) => ({
      project_id: project.id,
      event_id: uuidv7(),
      event_name: i % 2 === 0 ? 'feedback_list' : 'screen_view',
      user_id: `user-${i % 7}`,
      properties: { i },
      created_at: new Date(now - i).toISOString(),
      received_at: new Date(now).toISOString(),
      // Server ids: only the re-run's own lookup in events can find them.
      id_from_client: false,
    }));
  }

  async function counts(events: IngestEvent[]) {
    const ids = events.map((event) => event.event_id);
    const [row] = await server.clickhouseRows<{ stored: string; copies: string; indexed: string; by_user: string }>(
      `SELECT
         (SELECT uniqExact(event_id) FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}) AS stored,
         (SELECT count() FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}) AS copies,
         (SELECT uniqExact(event_id) FROM event_ids WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}) AS indexed,
         (SELECT count() FROM events_by_user WHERE project_id = {p:UUID}) AS by_user`,
      { p: project.id, ids },
    );
    return { stored: Number(row?.stored), copies: Number(row?.copies), indexed: Number(row?.indexed), byUser: Number(row?.by_user) };
  }

  const today = () => new Date().toISOString().slice(0, 10);

  it('stores nothing twice, adds the lost index rows and rebuilds the short rollups', async () => {
    const events = batch(300);
    const first = await server.services.eventWriter.write(events, `events:group:${randomUUID()}`);
    expect(first.inserted).toBe(300);
    // The crash: the views' parts of that insert never landed.
    const ids = events.map((event) => event.event_id);
    const sync = { mutations_sync: '2' };
    await server.clickhouse.command({
      query: 'ALTER TABLE event_ids DELETE WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}',
      query_params: { p: project.id, ids },
      clickhouse_settings: sync,
    });
    for (const table of ['events_by_user', 'events_daily', 'events_hourly']) {
      await server.clickhouse.command({
        query: `ALTER TABLE ${table} DELETE WHERE project_id = {p:UUID}`,
        query_params: { p: project.id },
        clickhouse_settings: sync,
      });
    }
    expect(await counts(events)).toEqual({ stored: 300, copies: 300, indexed: 0, byUser: 0 });
    expect(await rollupMismatches({ client: server.clickhouse }, project.id, [today()])).toBeGreaterThan(0);

    // The job runs again, under its own token, as a re-run does.
    const rerun = await server.services.eventWriter.write(events, `events:job:${randomUUID()}`, { checkAll: true });
    expect(rerun).toMatchObject({ inserted: 0, repaired: { indexRows: 300, rollupDays: 1, userOrderedRows: 300 } });
    expect(await counts(events)).toEqual({ stored: 300, copies: 300, indexed: 300, byUser: 300 });
    expect(await rollupMismatches({ client: server.clickhouse }, project.id, [today()])).toBe(0);

    // Nothing left to repair: a second re-run changes nothing.
    const again = await server.services.eventWriter.write(events, `events:job:${randomUUID()}`, { checkAll: true });
    expect(again).toMatchObject({ inserted: 0, repaired: { indexRows: 0, rollupDays: 0, userOrderedRows: 0 } });
    expect(await counts(events)).toEqual({ stored: 300, copies: 300, indexed: 300, byUser: 300 });
  });

  it('writes the part of a re-run batch that was never stored, once', async () => {
    const events = batch(50);
    await server.services.eventWriter.write(events.slice(0, 20), `events:group:${randomUUID()}`);
    const rerun = await server.services.eventWriter.write(events, `events:job:${randomUUID()}`, { checkAll: true });
    expect(rerun).toMatchObject({ inserted: 30, repaired: { indexRows: 0, rollupDays: 0, userOrderedRows: 0 } });
    expect(await counts(events)).toEqual({ stored: 50, copies: 50, indexed: 50, byUser: 350 });
    expect(await rollupMismatches({ client: server.clickhouse }, project.id, [today()])).toBe(0);
  });
});
