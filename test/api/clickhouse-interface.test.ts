import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChAnswer, chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/*
 * The read-only ClickHouse HTTP interface (issue 29, docs/clickhouse-interface.md), spoken to as
 * curl and ClickHouse's documentation speak to a server.
 */

let server: TestServer;
let own: TestProject;
let other: TestProject;
let cred: TestClickhouseCredential;
let base: string;

beforeAll(async () => {
  server = await startTestServer({ workers: false });
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'FOREIGN');
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
});
afterAll(async () => {
  await server?.close();
});

const q = (query: string, extra: Record<string, string> = {}) => chRequest(base, { query, ...extra }, { auth: cred });
const code = (r: ChAnswer) => r.headers.get('x-clickhouse-exception-code');

describe('the ClickHouse interface', () => {
  it('GET /ping answers Ok., and GET /?query=SELECT 1 answers 1', async () => {
    const ping = await chRequest(base, {}, { path: '/ping' });
    expect([ping.status, ping.text]).toEqual([200, 'Ok.\n']);
    const one = await q('SELECT 1');
    expect([one.status, one.text]).toEqual([200, '1\n']);
    expect(one.headers.get('x-clickhouse-format')).toBe('TabSeparated');
    expect(one.headers.get('content-type')).toBe('text/tab-separated-values; charset=UTF-8');
  });

  it('counts only the own project’s events', async () => {
    const r = await q('SELECT count() FROM events');
    expect([r.status, r.text]).toEqual([200, '3\n']);
  });

  it('a wrong password is 516 in ClickHouse’s form', async () => {
    const r = await chRequest(base, { query: 'SELECT 1' }, { auth: { ...cred, password: 'nope' } });
    expect(r.status).toBe(403);
    expect(code(r)).toBe('516');
    expect(r.text).toMatch(/^Code: 516\. DB::Exception: .*Authentication failed.*\(AUTHENTICATION_FAILED\)/);
  });
});
