import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { foreignMarkersOf, hostileQueries } from '../helpers/project-sql-hostile-cases.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/**
 * Tenant SQL isolation (docs/project-sql.md): hostile queries written to reach another project's
 * rows, or anything outside events, facts, events_daily and events_hourly. Two other projects are
 * seeded with recognisable rows in events, facts and (through their materialized views) both
 * rollups: one of another account, and a sibling project of the querying account. Every hostile
 * query is either refused with a 400 or answers only the own project's rows: neither its rows nor
 * its error message hold a marker, id or event of the other projects that the query text did not
 * itself contain.
 */

let own: TestProject;
let sibling: TestProject;
let stranger: TestProject;
/** Lower-case strings that only the other projects' rows hold. */
let foreignMarkers: string[] = [];

/** The server mode runs when CLICKHOUSE_URL names a ClickHouse server (same filters, as request settings). */
const SERVER_URL = process.env.CLICKHOUSE_URL;
const MODES: [string, Record<string, string>][] = [
  ['embedded chDB', {}],
  ...(SERVER_URL ? ([['a ClickHouse server', { CLICKHOUSE_URL: SERVER_URL }]] as [string, Record<string, string>][]) : []),
];
if (!SERVER_URL)
  console.log('project-sql-hostile: CLICKHOUSE_URL is not set, so the ClickHouse-server run is skipped (embedded chDB only)');

async function seed(server: TestServer) {
  own = await createProject(server, { plan: 'pro' });
  sibling = await createProject(server, { account: own.account });
  stranger = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  const a = await seedAnalytics(server, sibling.id, 'FOREIGNSIB');
  const b = await seedAnalytics(server, stranger.id, 'FOREIGN');
  foreignMarkers = foreignMarkersOf([sibling.id, stranger.id], [a, b]);
}

const HOSTILE = hostileQueries({ own: () => own.id, sibling: () => sibling.id, stranger: () => stranger.id });

describe.each(MODES)('tenant SQL on %s: no hostile query returns another project’s rows', (_mode, env) => {
  const server = useTestServer({ workers: false, env });
  beforeAll(() => seed(server));

  it('has at least 100 hostile queries', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(100);
  });

  it.each(HOSTILE)('%s: refused with 400, or only the own project’s rows', async (_, query, params) => {
    const text = query();
    const r = await server.request('POST', `/api/v1/projects/${own.id}/sql`, {
      bearer: own.account.adminToken,
      body: { query: text, ...(params ? { params: params() } : {}) },
    });
    expect([200, 400], JSON.stringify(r.body)).toContain(r.status);
    const shown = JSON.stringify(r.status === 200 ? r.body.rows : r.body).toLowerCase();
    for (const marker of foreignMarkers) {
      if (
        text.toLowerCase().includes(marker) ||
        JSON.stringify(params?.() ?? {})
          .toLowerCase()
          .includes(marker)
      )
        continue;
      expect(shown, `leaks ${marker}`).not.toContain(marker);
    }
    if (r.status === 200) {
      // A project id in a row is the own one (or an outer join's default).
      for (const row of r.body.rows as Record<string, unknown>[]) {
        for (const [column, value] of Object.entries(row)) {
          if (/project_id$/.test(column)) expect([own.id, '00000000-0000-0000-0000-000000000000', null]).toContain(value);
        }
      }
    } else {
      expect(r.body).toEqual({ error: true, reason: expect.stringMatching(/^query: /), message: expect.stringMatching(/^query: /) });
    }
  });

  it('the engine filters every read: counts over each table, however reached, are the own project’s', async () => {
    const r = await server.request('POST', `/api/v1/projects/${own.id}/sql`, {
      bearer: own.account.adminToken,
      body: {
        query: `SELECT
          (SELECT count() FROM events) AS e,
          (SELECT count() FROM default.events) AS qe,
          (WITH c AS (SELECT * FROM events) SELECT count() FROM c) AS ce,
          (SELECT count() FROM (SELECT 1 FROM events UNION ALL SELECT 1 FROM default.events)) AS ue,
          (SELECT count() FROM events AS a JOIN default.events AS b ON a.event_id = b.event_id) AS je,
          (SELECT count() FROM facts) AS f,
          (SELECT sum(events) FROM events_daily) AS d,
          (SELECT sum(events) FROM default.events_hourly) AS h,
          (SELECT count() FROM facts WHERE user_id IN (SELECT user_id FROM events)) AS inf`,
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Pro: 30 days, all event names; the 100-day-old rows are outside.
    expect(r.body.rows).toEqual([{ e: '3', qe: '3', ce: '3', ue: '6', je: '3', f: '2', d: '3', h: '3', inf: '2' }]);
  });
});
