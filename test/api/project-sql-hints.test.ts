import { beforeAll, describe, expect, it } from 'vitest';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The first query people write, grouping by a property, fails in the engine (a JSON path has no
 * fixed type): both the SQL console's route and the ClickHouse interface answer it with the fix
 * (docs/project-sql.md, "Properties").
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let cred: TestClickhouseCredential;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  await seedAnalytics(server, own.id, 'own');
  cred = await createClickhouseCredential(server, own);
});

const GROUPED = 'SELECT properties.secret, count() FROM events GROUP BY properties.secret';

describe('the Variant/Dynamic GROUP BY error, with its fix', () => {
  it('POST /projects/:id/sql answers 400 naming properties.<key>::String and toString', async () => {
    const r = await server.request('POST', `/api/v1/projects/${own.id}/sql`, { bearer: own.account.adminToken, body: { query: GROUPED } });
    expect(r.status).toBe(400);
    expect(r.body.reason).toMatch(/Variant\/Dynamic are not allowed in GROUP BY keys/);
    expect(r.body.reason).toContain('properties.country::String');
    expect(r.body.reason).toContain('toString(properties.country)');
    expect(r.body.reason).not.toContain('allow_suspicious_types_in_group_by');
  });

  it('the ClickHouse interface answers code 44 in the engine’s form with the same fix', async () => {
    const r = await chRequest(`${server.url}/clickhouse`, { query: GROUPED }, { auth: cred });
    expect(r.status).toBe(400);
    expect(r.headers.get('x-clickhouse-exception-code')).toBe('44');
    expect(r.text).toMatch(/^Code: 44\. DB::Exception: .*properties\.country::String.*\(ILLEGAL_COLUMN\)/);
  });

  it('the fix works', async () => {
    const fixed = 'SELECT properties.secret::String AS secret, count() AS n FROM events GROUP BY secret';
    const r = await server.request('POST', `/api/v1/projects/${own.id}/sql`, { bearer: own.account.adminToken, body: { query: fixed } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.rows).toEqual([{ secret: 'own-prop', n: '3' }]);
  });
});
