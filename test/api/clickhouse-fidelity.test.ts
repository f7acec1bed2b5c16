import { createClient } from '@clickhouse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ChAnswer, chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Where the ClickHouse interface (docs/clickhouse-interface.md) answers what a server answers for
 * the user a tool connects as (currentUser(), SHOW GRANTS, access introspection) and the figures it
 * reads from the headers (X-ClickHouse-Summary, X-ClickHouse-Progress).
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let cred: TestClickhouseCredential;
let base: string;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  await seedAnalytics(server, own.id, 'own');
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
});

const q = (query: string, extra: Record<string, string> = {}) => chRequest(base, { query, ...extra }, { auth: cred });
const code = (r: ChAnswer) => r.headers.get('x-clickhouse-exception-code');
const summary = (r: ChAnswer) => JSON.parse(r.headers.get('x-clickhouse-summary') ?? 'null') as Record<string, string>;

describe('the user a tool connects as', () => {
  it('currentUser() and its aliases answer the credential’s username, under their own column names', async () => {
    const r = await q('SELECT currentUser(), user(), current_user(), USER() AS u, session_user() FORMAT JSONEachRow');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({
      'currentUser()': cred.username,
      'user()': cred.username,
      'current_user()': cred.username,
      u: cred.username,
      'session_user()': cred.username,
    });
  });

  it('in expressions, WHERE and subqueries, and never inside a string or a quoted name', async () => {
    const r = await q(
      "SELECT length(currentUser()) AS n, 'currentUser()' AS s, (SELECT currentUser()) = currentUser() AS same, count() AS c FROM events WHERE currentUser() != '' FORMAT JSONEachRow",
    );
    expect(JSON.parse(r.text)).toEqual({ n: cred.username.length, s: 'currentUser()', same: 1, c: 3 });
  });

  it('a bare currentUser resolves to the credential too; a column named user stays a column', async () => {
    expect((await q('SELECT currentUser')).text).toBe(`${cred.username}\n`);
    expect((await q("SELECT user FROM (SELECT 'a column' AS user)")).text).toBe('a column\n');
  });

  it('a request parameter cannot stand in for it', async () => {
    const r = await q('SELECT currentUser()', { param_ch_interface_current_user: 'someone-else' });
    expect(r.text).toBe(`${cred.username}\n`);
  });

  it('SHOW GRANTS lists what the credential reads; another user’s grants, SHOW USERS and system.users are refused as a server refuses them', async () => {
    const grants = await q('SHOW GRANTS FORMAT TabSeparatedWithNames');
    expect(grants.status).toBe(200);
    expect(grants.text).toBe(
      ['GRANTS', ...['events', 'facts', 'events_daily', 'events_hourly'].map((t) => `GRANT SELECT ON default.${t} TO \`${cred.username}\``)]
        .join('\n')
        .concat('\n'),
    );
    expect((await q(`SHOW GRANTS FOR \`${cred.username}\``)).text).toBe(grants.text.split('\n').slice(1).join('\n'));
    expect((await q('SHOW GRANTS FOR CURRENT_USER')).status).toBe(200);
    for (const [query, grant] of [
      ['SHOW GRANTS FOR default', 'SHOW USERS'],
      ['SHOW USERS', 'SHOW USERS'],
      ['SHOW CREATE USER default', 'SHOW USERS'],
      ['SHOW ROLES', 'SHOW ROLES'],
      ['SHOW QUOTAS', 'SHOW QUOTAS'],
      ['SHOW PROFILES', 'SHOW SETTINGS PROFILES'],
      ['SHOW ROW POLICIES', 'SHOW ROW POLICIES'],
      ['SHOW ACCESS', 'SHOW ACCESS'],
      ['SELECT name FROM system.users', 'SHOW USERS'],
      ['SELECT * FROM system.grants', 'SHOW USERS'],
      ['SELECT name FROM system.roles', 'SHOW ROLES'],
    ]) {
      const r = await q(query as string);
      expect([r.status, code(r)], query).toEqual([403, '497']);
      expect(r.text, query).toMatch(
        new RegExp(
          `^Code: 497\\. DB::Exception: .*Not enough privileges\\. To execute this query, it's necessary to have the grant ${grant} ON \\*\\.\\*\\. \\(ACCESS_DENIED\\)`,
        ),
      );
    }
    const roles = await q('SHOW CURRENT ROLES FORMAT TabSeparatedWithNames');
    expect([roles.status, roles.text]).toEqual([200, 'role_name\twith_admin_option\tis_default\n']);
  });
});

describe('settings a driver sends', () => {
  it('a setting given the value it already has is accepted, as a read-only server accepts it; another value is READONLY', async () => {
    const same: Record<string, string>[] = [
      { extremes: '0' },
      { join_use_nulls: 'false' },
      { readonly: '1' },
      { extremes: 'false', join_use_nulls: '0' },
    ];
    for (const setting of same) {
      const r = await q('SELECT 1', setting);
      expect([r.status, r.text], JSON.stringify(setting)).toEqual([200, '1\n']);
    }
    const other: Record<string, string>[] = [{ extremes: '1' }, { readonly: '2' }, { join_use_nulls: 'maybe' }, { max_memory_usage: '0' }];
    for (const setting of other) {
      const r = await q('SELECT 1', setting);
      expect([r.status, code(r)], JSON.stringify(setting)).toEqual([403, '164']);
    }
  });
});

describe('X-ClickHouse-Summary', () => {
  it('a small answer is held whole and carries the final figures', async () => {
    const r = await q('SELECT number FROM numbers(10) FORMAT JSONEachRow');
    const s = summary(r);
    expect(Object.keys(s)).toEqual([
      'read_rows',
      'read_bytes',
      'written_rows',
      'written_bytes',
      'total_rows_to_read',
      'result_rows',
      'result_bytes',
      'elapsed_ns',
    ]);
    expect(s.result_rows).toBe('10');
    expect(Number(s.result_bytes)).toBe(r.bytes.length);
    expect(Number(s.elapsed_ns)).toBeGreaterThan(0);
    expect([s.written_rows, s.written_bytes]).toEqual(['0', '0']);
    for (const value of Object.values(s)) expect(value).toMatch(/^\d+$/);
  });

  it('wait_end_of_query=1 gives the final figures of a larger answer; a long stream gives what is known when the headers go', async () => {
    const rows = 300_000;
    const waited = await q(`SELECT number FROM numbers(${rows})`, { wait_end_of_query: '1' });
    expect(summary(waited).result_rows).toBe(String(rows));
    const streamed = await q(`SELECT number FROM numbers(${rows})`);
    expect(streamed.text.split('\n')).toHaveLength(rows + 1);
    // Embedded, the engine writes into a pipe and reports the result's rows when it has finished:
    // the headers of a longer stream carry the output bytes so far, and no rows yet.
    const early = summary(streamed);
    expect(Number(early.result_bytes)).toBeGreaterThan(0);
    expect(Number(early.result_bytes)).toBeLessThan(streamed.bytes.length);
    expect(Number(early.result_rows)).toBeLessThan(rows);
  });

  it('an error in a small answer still gets its own status, as a server holds the start of the answer', async () => {
    const r = await q("SELECT number, throwIf(number = 5, 'boom') FROM numbers(10)");
    expect([r.status, code(r)]).toEqual([500, '395']);
  });

  it('send_progress_in_http_headers=1 adds X-ClickHouse-Progress', async () => {
    const r = await q('SELECT 1', { send_progress_in_http_headers: '1' });
    expect(JSON.parse(r.headers.get('x-clickhouse-progress') ?? 'null')).toMatchObject({ result_rows: '1' });
    expect((await q('SELECT 1')).headers.get('x-clickhouse-progress')).toBeNull();
  });

  it('@clickhouse/client reads it as the result’s summary', async () => {
    const client = createClient({ url: server.url, pathname: '/clickhouse', username: cred.username, password: cred.password });
    try {
      const result = await client.query({ query: 'SELECT number FROM numbers(5)', format: 'JSONEachRow' });
      expect(await result.json()).toHaveLength(5);
      expect(JSON.parse(String(result.response_headers['x-clickhouse-summary']))).toMatchObject({ result_rows: '5' });
      const command = await client.command({ query: 'SELECT 1' });
      expect(command.summary).toMatchObject({ result_rows: '1', written_rows: '0' });
    } finally {
      await client.close();
    }
  });
});
