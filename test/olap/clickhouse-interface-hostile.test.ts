import { beforeAll, describe, expect, it } from 'vitest';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { foreignMarkersOf, hostileQueries } from '../helpers/project-sql-hostile-cases.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Tenant isolation over the ClickHouse interface (issue 29): every hostile query of the JSON
 * route's test (test/helpers/project-sql-hostile-cases.ts) again, sent as a ClickHouse client
 * sends it, with two other projects' rows present (another account's, and a sibling of the same
 * account). Each is refused in ClickHouse's form or answers only the own project's rows; neither
 * its rows nor its error shows a marker, id or event of the others.
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let sibling: TestProject;
let stranger: TestProject;
let cred: TestClickhouseCredential;
let foreignMarkers: string[] = [];

const HOSTILE = hostileQueries({ own: () => own.id, sibling: () => sibling.id, stranger: () => stranger.id });

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  sibling = await createProject(server, { account: own.account });
  stranger = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  const a = await seedAnalytics(server, sibling.id, 'FOREIGNSIB');
  const b = await seedAnalytics(server, stranger.id, 'FOREIGN');
  foreignMarkers = foreignMarkersOf([sibling.id, stranger.id], [a, b]);
  cred = await createClickhouseCredential(server, own);
});

describe('the ClickHouse interface: no hostile query returns another project’s rows', () => {
  it('runs every hostile query of the JSON route', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(100);
  });

  it.each(HOSTILE)('%s: refused in ClickHouse’s form, or only the own project’s rows', async (_, query, params) => {
    const text = query();
    const search: Record<string, string> = { query: text, default_format: 'JSONEachRow' };
    for (const [name, value] of Object.entries(params?.() ?? {})) search[`param_${name}`] = String(value);
    const r = await chRequest(`${server.url}/clickhouse`, search, { auth: cred });
    const shown = r.text.toLowerCase();
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
      expect(r.text).not.toContain('__exception__');
      for (const line of r.text.split('\n').filter(Boolean)) {
        for (const [column, value] of Object.entries(JSON.parse(line) as Record<string, unknown>)) {
          if (/project_id$/.test(column)) expect([own.id, '00000000-0000-0000-0000-000000000000', null]).toContain(value);
        }
      }
    } else {
      expect(r.headers.get('x-clickhouse-exception-code'), r.text).toMatch(/^\d+$/);
      expect(r.text).toMatch(/^Code: \d+\. DB::Exception: .*\([A-Z0-9_]+\) \(version [\d.]+\)\n$/s);
      expect(r.status).not.toBe(200);
    }
  });

  it('the engine filters every read: counts over each table, however reached, are the own project’s', async () => {
    const r = await chRequest(
      `${server.url}/clickhouse`,
      {
        query: `SELECT
          (SELECT count() FROM events) AS e,
          (SELECT count() FROM default.events) AS qe,
          (WITH c AS (SELECT * FROM events) SELECT count() FROM c) AS ce,
          (SELECT count() FROM (SELECT 1 FROM events UNION ALL SELECT 1 FROM default.events)) AS ue,
          (SELECT count() FROM events AS a JOIN default.events AS b ON a.event_id = b.event_id) AS je,
          (SELECT count() FROM facts) AS f,
          (SELECT sum(events) FROM events_daily) AS d,
          (SELECT sum(events) FROM default.events_hourly) AS h,
          (SELECT count() FROM facts WHERE user_id IN (SELECT user_id FROM events)) AS inf
        FORMAT JSONEachRow`,
      },
      { auth: cred },
    );
    expect(r.status, r.text).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ e: 3, qe: 3, ce: 3, ue: 6, je: 3, f: 2, d: 3, h: 3, inf: 2 });
  });
});
