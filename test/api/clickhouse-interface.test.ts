import { beforeAll, describe, expect, it } from 'vitest';
import { type ChAnswer, chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The read-only ClickHouse HTTP interface (issue 29, docs/clickhouse-interface.md), spoken to as
 * curl and ClickHouse's documentation speak to a server.
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let other: TestProject;
let cred: TestClickhouseCredential;
let base: string;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'FOREIGN');
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
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

describe('queries, formats and parameters', () => {
  it('joins the query parameter and the body with a line break, as ClickHouse does', async () => {
    const r = await chRequest(base, { query: 'SELECT' }, { auth: cred, body: '1 + 1' });
    expect([r.status, r.text]).toEqual([200, '2\n']);
  });

  it('answers each format exactly as the engine writes it', async () => {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const { Session } = require('chdb') as {
      Session: new (path: string) => { queryAsync(q: string, o: { format: string }): Promise<{ bytes(): Uint8Array }>; close(): void };
    };
    const session = new Session(`${server.dataDir}/clickhouse`);
    const query =
      "SELECT number, toString(number) AS s, toDate('2026-01-01') + number AS d, [number, 1] AS a, number % 3 = 0 AS b, toDecimal64(number, 2) AS m FROM numbers(300)";
    const formats = [
      'TabSeparated',
      'TabSeparatedWithNames',
      'TabSeparatedWithNamesAndTypes',
      'CSV',
      'CSVWithNames',
      'JSON',
      'JSONCompact',
      'JSONEachRow',
      'JSONStringsEachRow',
      'JSONCompactEachRowWithNamesAndTypes',
      'RowBinaryWithNamesAndTypes',
      'Parquet',
      'Native',
    ];
    try {
      for (const format of formats) {
        const r = await q(`${query} FORMAT ${format}`);
        expect(r.status, `${format}: ${r.text.slice(0, 300)}`).toBe(200);
        expect(r.headers.get('x-clickhouse-format')).toBe(format);
        const direct = Buffer.from((await session.queryAsync(query, { format })).bytes());
        // JSON and JSONCompact end with the query's statistics (elapsed time, rows read): compared without them.
        const stable = (bytes: Buffer) =>
          /^JSON(Compact)?$/.test(format) ? bytes.toString('utf8').replace(/"statistics":[\s\S]*$/, '') : bytes;
        const [got, want] = [stable(r.bytes), stable(direct)];
        if (!Buffer.from(got).equals(Buffer.from(want))) {
          const at = [...Buffer.from(got)].findIndex((byte, i) => byte !== Buffer.from(want)[i]);
          expect(
            Buffer.from(got)
              .subarray(Math.max(0, at - 80), at + 80)
              .toString(),
            `${format} differs at ${at}`,
          ).toBe(
            Buffer.from(want)
              .subarray(Math.max(0, at - 80), at + 80)
              .toString(),
          );
        }
      }
    } finally {
      session.close();
    }
  });

  it('takes default_format and X-ClickHouse-Format; a FORMAT clause wins', async () => {
    expect((await q('SELECT 1 AS x', { default_format: 'JSONEachRow' })).text).toBe('{"x":1}\n');
    const header = await chRequest(base, { query: 'SELECT 1 AS x' }, { auth: cred, headers: { 'X-ClickHouse-Format': 'CSVWithNames' } });
    expect(header.text).toBe('"x"\n1\n');
    expect(header.headers.get('content-type')).toBe('text/csv; charset=UTF-8; header=present');
    expect((await q('SELECT 1 AS x FORMAT CSV', { default_format: 'JSONEachRow' })).text).toBe('1\n');
    const unknown = await q('SELECT 1 FORMAT NoSuchFormat');
    expect([unknown.status, code(unknown)]).toEqual([404, '73']);
  });

  it('fills {name:Type} from param_<name>', async () => {
    // Values in ClickHouse's Escaped text format, as clients send them: \\t a tab, \\\\ a backslash, \\' a quote.
    const r = await q('SELECT {x:UInt8} + 1 AS y, {s:String} AS s FORMAT JSONEachRow', { param_x: '41', param_s: "it\\'s\\ta\\\\b" });
    expect(r.text).toBe(`${JSON.stringify({ y: 42, s: "it's\ta\\b" })}\n`);
  });

  it('accepts the database parameter when it names the service’s database', async () => {
    expect((await q('SELECT currentDatabase()', { database: 'default' })).text).toBe('default\n');
    const other = await q('SELECT 1', { database: 'system' });
    expect([other.status, code(other)]).toEqual([404, '81']);
    expect(other.text).toMatch(/^Code: 81\. DB::Exception: Database system does not exist\. \(UNKNOWN_DATABASE\)/);
  });

  it('sends the headers clients read', async () => {
    const r = await q('SELECT 1', { query_id: 'my-query-1' });
    expect(r.headers.get('x-clickhouse-query-id')).toBe('my-query-1');
    expect(r.headers.get('x-clickhouse-timezone')).toBe('Etc/UTC');
    expect(JSON.parse(r.headers.get('x-clickhouse-summary') ?? '')).toMatchObject({ read_rows: expect.any(String) });
    expect((await q('SELECT 1')).headers.get('x-clickhouse-query-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('settings', () => {
  it('allows output settings and lower limits', async () => {
    const plain = await q('SELECT toUInt64(5) AS n FORMAT JSONEachRow');
    expect(plain.text).toBe('{"n":5}\n');
    const quoted = await q('SELECT toUInt64(5) AS n FORMAT JSONEachRow', { output_format_json_quote_64bit_integers: '1' });
    expect(quoted.text).toBe('{"n":"5"}\n');
    expect((await q('SELECT now()', { session_timezone: 'Asia/Tokyo' })).headers.get('x-clickhouse-timezone')).toBe('Asia/Tokyo');
    const rows = await q('SELECT number FROM numbers(10)', { max_result_rows: '3' });
    expect([rows.status, code(rows)]).toEqual([500, '396']);
  });

  it('refuses any other setting, or one that lifts a limit, with 164 READONLY', async () => {
    const settings: Record<string, string>[] = [
      { max_threads: '8' },
      { readonly: '0' },
      { additional_table_filters: "{'events':'1'}" },
      { max_execution_time: '100000' },
      { max_result_rows: '0' },
      { max_memory_usage: '0' },
    ];
    for (const setting of settings) {
      const r = await q('SELECT 1', setting);
      expect([r.status, code(r)], JSON.stringify(setting)).toEqual([403, '164']);
      expect(r.text).toMatch(/^Code: 164\. DB::Exception: Cannot modify '.*' setting in readonly mode\. \(READONLY\)/);
    }
  });
});

describe('compression', () => {
  it('compresses the answer with enable_http_compression=1, by Accept-Encoding', async () => {
    const { gunzipSync } = await import('node:zlib');
    const url = `${base}/?${new URLSearchParams({ query: 'SELECT number FROM numbers(5)', enable_http_compression: '1' })}`;
    const auth = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
    // fetch would decompress on its own: node:http shows the bytes as sent.
    const { request } = await import('node:http');
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      request(url, { headers: { authorization: auth, 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      })
        .on('error', reject)
        .end();
    });
    expect(raw.encoding).toBe('gzip');
    expect(gunzipSync(raw.body).toString()).toBe('0\n1\n2\n3\n4\n');
  });

  it('accepts a gzip-compressed body', async () => {
    const { gzipSync } = await import('node:zlib');
    const r = await chRequest(base, {}, { auth: cred, body: gzipSync('SELECT 40 + 2'), headers: { 'content-encoding': 'gzip' } });
    expect([r.status, r.text]).toEqual([200, '42\n']);
  });
});

describe('errors in ClickHouse’s form', () => {
  const cases: [string, string, number, string][] = [
    ['a syntax error', 'SELEC 1', 400, '62'],
    ['an unknown table', 'SELECT * FROM no_such_table', 404, '60'],
    ['an INSERT', 'INSERT INTO events SELECT * FROM events', 403, '164'],
    ['a CREATE', 'CREATE TABLE x (a UInt8) ENGINE = Memory', 403, '164'],
    ['a SET', 'SET max_threads = 8', 403, '164'],
    ['a SETTINGS clause', 'SELECT 1 SETTINGS max_threads = 8', 403, '164'],
    ['system.parts', 'SELECT * FROM system.parts', 403, '497'],
    ['the materialized view', 'SELECT * FROM events_daily_mv', 403, '497'],
    ['url()', "SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')", 403, '497'],
    ['a second statement', 'SELECT 1; SELECT 2', 400, '62'],
  ];
  it.each(cases)('%s: the code header, a one-line body and the status ClickHouse gives', async (_, query, status, expected) => {
    const r = await q(query);
    expect([r.status, code(r)], r.text).toEqual([status, expected]);
    expect(r.text).toMatch(new RegExp(`^Code: ${expected}\\. DB::Exception: .+\\. \\([A-Z_]+\\) \\(version [\\d.]+\\)\\n$`));
    expect(r.text.split('\n')).toHaveLength(2);
  });
});

describe('introspection, as a server answers it', () => {
  it('version(), timezone(), currentDatabase(), currentUser()', async () => {
    const r = await q('SELECT version(), timezone(), currentDatabase(), currentUser()');
    expect(r.text).toMatch(/^\d+\.\d+\.\d+\.\d+\tEtc\/UTC\tdefault\t/);
    expect(r.text.split('\t')[3]).toBe(`${cred.username}\n`);
  });

  it('SHOW DATABASES and SHOW TABLES list only what the credential reads', async () => {
    expect((await q('SHOW DATABASES')).text).toBe('default\n');
    expect((await q('SHOW TABLES')).text).toBe('events\nevents_daily\nevents_hourly\nfacts\n');
    expect((await q('SHOW TABLES FROM default FORMAT JSONEachRow')).text.split('\n')[0]).toBe('{"name":"events"}');
  });

  it('DESCRIBE TABLE and EXISTS TABLE', async () => {
    const described = await q('DESCRIBE TABLE events FORMAT TabSeparatedWithNames');
    expect(described.text.split('\n')[0]).toBe('name\ttype\tdefault_type\tdefault_expression\tcomment\tcodec_expression\tttl_expression');
    expect(described.text).toMatch(/\nproject_id\tUUID\t/);
    expect((await q('EXISTS TABLE events')).text).toBe('1\n');
    expect((await q('EXISTS TABLE default.facts')).text).toBe('1\n');
    expect((await q('EXISTS TABLE events_daily_mv')).text).toBe('0\n');
    const hidden = await q('DESCRIBE TABLE events_daily_mv');
    expect([hidden.status, code(hidden)]).toEqual([404, '60']);
  });

  it('system.databases, system.tables and system.columns are filtered; their cross-project columns NULL', async () => {
    expect((await q('SELECT name FROM system.databases')).text).toBe('default\n');
    expect((await q("SELECT name FROM system.tables WHERE database = 'default' ORDER BY name")).text).toBe(
      'events\nevents_daily\nevents_hourly\nfacts\n',
    );
    expect((await q('SELECT DISTINCT table FROM system.columns ORDER BY table')).text).toBe('events\nevents_daily\nevents_hourly\nfacts\n');
    // The catalogue answers them as a server does where it has no figure (test/api/clickhouse-catalogue.test.ts).
    expect((await q('SELECT total_rows FROM system.tables LIMIT 1')).text).toBe('\\N\n');
    expect((await q('SELECT name FROM system.tables WHERE total_bytes > 0')).text).toBe('');
  });

  it('system.functions and system.data_type_families are readable; other system tables are not', async () => {
    expect(Number((await q("SELECT count() FROM system.functions WHERE name = 'count'")).text)).toBe(1);
    expect(Number((await q('SELECT count() > 10 FROM system.data_type_families')).text)).toBe(1);
    for (const table of ['system.settings', 'system.query_log', 'system.processes', 'system.users', 'system.parts']) {
      const r = await q(`SELECT * FROM ${table}`);
      expect([r.status, code(r)], table).toEqual([403, '497']);
    }
  });
});

describe('authentication', () => {
  it('takes HTTP Basic, the X-ClickHouse-User/Key headers and the user/password parameters', async () => {
    const headers = await chRequest(
      base,
      { query: 'SELECT 2' },
      { headers: { 'X-ClickHouse-User': cred.username, 'X-ClickHouse-Key': cred.password } },
    );
    expect([headers.status, headers.text]).toEqual([200, '2\n']);
    const params = await chRequest(base, { query: 'SELECT 3', user: cred.username, password: cred.password });
    expect([params.status, params.text]).toEqual([200, '3\n']);
  });

  it('refuses no credential, another user name, an API key or an admin token as the password: 516', async () => {
    const attempts = [
      chRequest(base, { query: 'SELECT 1' }),
      chRequest(base, { query: 'SELECT 1' }, { auth: { ...cred, username: other.id } }),
      chRequest(base, { query: 'SELECT 1' }, { auth: { ...cred, password: own.apiKey } }),
      chRequest(base, { query: 'SELECT 1' }, { auth: { ...cred, password: own.account.adminToken } }),
      chRequest(base, { query: 'SELECT 1', user: 'default', password: '' }),
    ];
    for (const r of await Promise.all(attempts)) {
      expect([r.status, code(r)], r.text).toEqual([403, '516']);
    }
  });

  it('a revoked credential is refused from the next request on; last_used_at is set', async () => {
    const fresh = await createClickhouseCredential(server, own);
    expect((await chRequest(base, { query: 'SELECT 1' }, { auth: fresh })).status).toBe(200);
    const listed = await server.request('GET', `/api/v1/projects/${own.id}/clickhouse-credentials`, { bearer: own.account.adminToken });
    expect(listed.body.find((c: { id: string }) => c.id === fresh.id).last_used_at).toMatch(/^\d{4}-/);
    const revoked = await server.request('DELETE', `/api/v1/projects/${own.id}/clickhouse-credentials/${fresh.id}`, {
      bearer: own.account.adminToken,
    });
    expect(revoked.status).toBe(200);
    const r = await chRequest(base, { query: 'SELECT 1' }, { auth: fresh });
    expect([r.status, code(r)]).toEqual([403, '516']);
  });
});

describe('a client that goes away', () => {
  it('cancels its query: the lane is free for the next one at once', async () => {
    const url = `${base}/?${new URLSearchParams({ query: "SELECT number, repeat('x', 200) FROM numbers(1000000000)" })}`;
    const auth = `Basic ${Buffer.from(`${cred.username}:${cred.password}`).toString('base64')}`;
    // The first bytes of a large export, then the connection is closed.
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(url, { headers: { authorization: auth } }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve(res.statusCode);
        });
      });
      req.on('error', () => {});
      req.once('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    // Embedded chDB runs one interface query at a time: had the export gone on, this would wait for it (60 s, or up to 1 GiB).
    const started = Date.now();
    await eventually('the next query is answered', 20_000, async () => {
      const r = await chRequest(base, { query: 'SELECT 42' }, { auth: cred });
      return r.text === '42\n';
    });
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
