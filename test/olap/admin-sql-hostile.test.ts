import { existsSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chdbReadonlyEngine } from '../../src/olap/readonly/readonly-session.js';
import { sleep } from '../helpers/eventually.js';
import { createProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { useTestServer } from '../helpers/server.js';

/**
 * POST /admin/sql under attack: statements smuggled past the single-statement rule, writes, DDL,
 * SETTINGS that lift readonly, table functions and functions that reach files, the network or
 * processes. Each is a 400 with the SPEC body, and afterwards no table, row or file changed and
 * no request left the process.
 */

const server = useTestServer();
let dataDir: string;
let sentinel: string;
let listener: Server;
let listenerUrl: string;
let requestsSeen = 0;
const SENTINEL_BYTES = 'sentinel: this file must stay exactly as it is\n';

beforeAll(async () => {
  dataDir = server.services.config.dataDir;
  sentinel = path.join(dataDir, 'sentinel.txt');
  await writeFile(sentinel, SENTINEL_BYTES);
  listener = createServer((_req, res) => {
    requestsSeen += 1;
    res.end('leaked\n');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerUrl = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  const project = await createProject(server, { plan: 'pro' });
  const tracked = await server.request('POST', '/api/v1/events/batch', {
    apiKey: project.apiKey,
    body: {
      events: [
        { eventName: 'a', userId: 'u1' },
        { eventName: 'b', userId: 'u2' },
      ],
    },
  });
  expect(tracked.status).toBe(200);
  await server.eventsVisible();
  // The listener counts what reaches it (checked once, then the count starts from zero).
  await fetch(listenerUrl);
  expect(requestsSeen).toBe(1);
  requestsSeen = 0;
  stopWhenDone(async () => {
    await new Promise((resolve) => listener?.close(resolve));
  });
});

const sql = (query: string, params?: Record<string, unknown>) =>
  server.request('POST', '/api/v1/admin/sql', { bearer: server.operatorToken, body: { query, ...(params ? { params } : {}) } });

/** Every table with its row and active-part counts, as ClickHouse itself reports them. */
async function engineSnapshot() {
  const tables = await server.clickhouseRows(
    `SELECT database, name, engine, total_rows FROM system.tables
     WHERE database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') ORDER BY database, name`,
  );
  const parts = await server.clickhouseRows(
    `SELECT database, table, sum(rows) AS rows, count() AS parts FROM system.parts WHERE active
     GROUP BY database, table ORDER BY database, table`,
  );
  return { tables, parts };
}

/**
 * The snapshot once the service's own writes have settled: the outbox relay's facts of the set-up
 * may still land in ClickHouse (it lagged past the first snapshot on a loaded machine). Two
 * snapshots a second apart that agree are taken as settled.
 */
async function settledEngineSnapshot() {
  let last = await engineSnapshot();
  for (let tries = 0; tries < 30; tries++) {
    await sleep(1000); // pacing the comparison (docs/development.md, "Waiting")
    const next = await engineSnapshot();
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  throw new Error('the engine kept changing for 30 s without a query of this test');
}

/** Every file and directory under the data directory, with sizes, except the engine's own churn. */
async function listing(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const relative = path.relative(dir, full);
    const size = entry.isFile() ? (await stat(full)).size : 'dir';
    out.push(`${relative} ${size}`);
  }
  return out.sort();
}

const S = () => sentinel;
const U = () => listenerUrl;
const D = () => dataDir;
const hostPort = () => listenerUrl.replace('http://', '');

/** [what it tries, the query]. Functions: the paths and ports are only known once the server runs. */
const HOSTILE: [string, () => string][] = [
  // Statements smuggled past the single-statement rule
  ['the issue reproduction', () => 'SELECT 1); CREATE TABLE pwned (a Int32) ENGINE=MergeTree ORDER BY a; SELECT (1'],
  ['a second statement', () => 'SELECT 1; CREATE TABLE pwned2 (a Int32) ENGINE=Memory'],
  ['a second statement after a block comment holding ;', () => 'SELECT 1 /* ; */; DROP TABLE events'],
  ['a second statement after a literal holding ;', () => "SELECT ';' AS a; DROP TABLE events"],
  ['a second statement after a line comment', () => "SELECT 1 -- c;\n; INSERT INTO events (event_name) VALUES ('x')"],
  ['a parenthesis break-out with an insert', () => "SELECT 1); INSERT INTO facts (kind) VALUES ('x'); SELECT (1"],
  ['an escaped backslash that ends the literal, then a statement', () => "SELECT 'a\\\\'; DROP TABLE events; --'"],
  ['a heredoc literal holding ;', () => 'SELECT $$;$$; DROP TABLE events'],
  ['a quoted identifier holding ;', () => 'SELECT `a;b` FROM (SELECT 1 AS `a;b`); DROP TABLE events'],
  ['a CTE then ATTACH', () => 'WITH (SELECT 1) AS x SELECT x; ATTACH TABLE events'],
  ['DESCRIBE then DROP', () => 'DESCRIBE TABLE events; DROP TABLE events'],
  ['format() then DROP', () => "SELECT * FROM format(TSV, 'a'); DROP TABLE events"],
  ['EXPLAIN then DROP', () => 'EXPLAIN AST SELECT 1; DROP TABLE events'],
  ['comments around the ;', () => 'SELECT 1 /* x */ ; /* y */ DROP TABLE events'],
  ['a fullwidth semicolon', () => 'SELECT 1；DROP TABLE events'],
  ['a Greek question mark', () => 'SELECT 1\u037e DROP TABLE events'],
  ['a zero-width space before ;', () => 'SELECT 1\u200b; DROP TABLE events'],
  ['a UNION that ends in DDL', () => 'SELECT 1 UNION ALL SELECT 2; CREATE TABLE pwned4 (a Int32) ENGINE=Memory'],
  // Writes and DDL alone
  ['INSERT', () => "INSERT INTO events (event_name) VALUES ('x')"],
  ['INSERT INTO FUNCTION file', () => `INSERT INTO FUNCTION file('${D()}/out.csv', 'CSV', 'a Int32') SELECT 1`],
  ['CREATE TABLE', () => 'CREATE TABLE pwned3 (a Int32) ENGINE=Memory'],
  [
    'CREATE DICTIONARY over HTTP',
    () => `CREATE DICTIONARY d (k UInt64, v String) PRIMARY KEY k SOURCE(HTTP(url '${U()}' format 'TSV')) LAYOUT(FLAT()) LIFETIME(0)`,
  ],
  ['DROP TABLE', () => 'DROP TABLE events'],
  ['TRUNCATE', () => 'TRUNCATE TABLE events'],
  ['ALTER DELETE', () => 'ALTER TABLE events DELETE WHERE 1'],
  ['OPTIMIZE', () => 'OPTIMIZE TABLE events FINAL'],
  ['BACKUP', () => "BACKUP TABLE events TO Disk('default', 'b.zip')"],
  ['SYSTEM', () => 'SYSTEM DROP MARK CACHE'],
  ['SYSTEM SHUTDOWN', () => 'SYSTEM SHUTDOWN'],
  ['KILL', () => 'KILL QUERY WHERE 1'],
  ['SET', () => 'SET readonly = 0'],
  // Output redirection
  ['INTO OUTFILE', () => `SELECT 1 INTO OUTFILE '${D()}/outfile.csv'`],
  ['INTO OUTFILE with FORMAT', () => `SELECT 1 INTO OUTFILE '${D()}/outfile2.csv' FORMAT CSV`],
  ['INTO OUTFILE TRUNCATE over the sentinel', () => `SELECT 1 FROM system.one INTO OUTFILE '${S()}' TRUNCATE`],
  ['a FORMAT clause', () => 'SELECT 1 FORMAT CSV'],
  // SETTINGS
  ['a SETTINGS clause', () => 'SELECT 1 SETTINGS max_threads = 64'],
  ['readonly = 0 at the top', () => 'SELECT * FROM numbers(1) SETTINGS readonly = 0'],
  ['allow_ddl = 1', () => 'SELECT * FROM system.one SETTINGS allow_ddl = 1'],
  ['readonly = 0 in a subquery over file()', () => `SELECT * FROM (SELECT * FROM file('${S()}', 'LineAsString') SETTINGS readonly = 0)`],
  [
    'readonly = 0 in a CTE over url()',
    () => `WITH x AS (SELECT * FROM url('${U()}/cte', 'LineAsString') SETTINGS readonly = 0) SELECT * FROM x`,
  ],
  ['readonly = 0 inside view()', () => `SELECT * FROM view(SELECT * FROM file('${S()}', 'LineAsString') SETTINGS readonly = 0)`],
  [
    'readonly = 2 in a nested subquery',
    () => `SELECT * FROM (SELECT * FROM (SELECT * FROM file('${S()}', 'LineAsString') SETTINGS readonly = 2))`,
  ],
  // Files
  ['file() in FROM', () => `SELECT * FROM file('${S()}', 'LineAsString')`],
  ['the file() function', () => `SELECT file('${S()}')`],
  ['FILE() in capitals', () => `SELECT FILE('${S()}')`],
  ['file() in a UNION', () => `SELECT '1' UNION ALL SELECT * FROM file('${S()}', 'LineAsString')`],
  ['file() in a scalar subquery', () => `SELECT (SELECT * FROM file('${S()}', 'LineAsString'))`],
  ['file() in a JOIN', () => `SELECT * FROM numbers(1) AS n CROSS JOIN file('${S()}', 'LineAsString') AS f`],
  ['fileCluster()', () => `SELECT * FROM fileCluster('default', '${S()}', 'LineAsString')`],
  ['sqlite() over a file', () => `SELECT * FROM sqlite('${S()}', 't')`],
  ['filesystem()', () => `SELECT * FROM filesystem('${D()}')`],
  ['a Cyrillic і in file', () => `SELECT * FROM f\u0456le('${S()}', 'LineAsString')`],
  ['fullwidth letters', () => `SELECT ｆｉｌｅ('${S()}')`],
  ['catboostEvaluate on a file', () => `SELECT catboostEvaluate('${S()}', 1)`],
  ['getServerSetting', () => "SELECT getServerSetting('path')"],
  // Network
  ['url()', () => `SELECT * FROM url('${U()}/a', 'LineAsString')`],
  ['URL() in capitals', () => `SELECT * FROM URL('${U()}/b', LineAsString)`],
  ['url() with headers', () => `SELECT * FROM url('${U()}/c', 'LineAsString', headers('X' = '1'))`],
  ['url() in an IN subquery', () => `SELECT * FROM numbers(1) WHERE toString(number) IN (SELECT * FROM url('${U()}/d', 'LineAsString'))`],
  ['urlCluster()', () => `SELECT * FROM urlCluster('default', '${U()}/e', 'LineAsString')`],
  ['s3()', () => `SELECT * FROM s3('${U()}/bucket/key', 'LineAsString')`],
  ['hdfs()', () => `SELECT * FROM hdfs('hdfs://${hostPort()}/x', 'LineAsString')`],
  ['azureBlobStorage()', () => `SELECT * FROM azureBlobStorage('${U()}', 'c', 'b')`],
  ['iceberg()', () => `SELECT * FROM iceberg('${U()}/i')`],
  ['deltaLake()', () => `SELECT * FROM deltaLake('${U()}/d')`],
  ['remote()', () => `SELECT * FROM remote('${hostPort()}', system.one)`],
  ['remoteSecure()', () => `SELECT * FROM remoteSecure('${hostPort()}', system.one)`],
  ['cluster()', () => "SELECT * FROM cluster('default', system.one)"],
  ['postgresql()', () => `SELECT * FROM postgresql('${hostPort()}', 'db', 't', 'u', 'p')`],
  ['mysql()', () => `SELECT * FROM mysql('${hostPort()}', 'db', 't', 'u', 'p')`],
  ['mongodb()', () => `SELECT * FROM mongodb('${hostPort()}', 'db', 'c', 'u', 'p', 'x String')`],
  ['redis()', () => `SELECT * FROM redis('${hostPort()}', 'k', 'k String')`],
  ['jdbc()', () => "SELECT * FROM jdbc('jdbc:x', 't')"],
  ['odbc()', () => "SELECT * FROM odbc('DSN=x', 't')"],
  // Processes, dictionaries, input
  ['executable()', () => `SELECT * FROM executable('cat ${S()}', 'LineAsString', 'x String')`],
  ['dictionary()', () => "SELECT * FROM dictionary('d')"],
  ['dictGet()', () => "SELECT dictGet('d', 'v', toUInt64(1))"],
  ['input()', () => "SELECT * FROM input('x String')"],
];

describe('POST /api/v1/admin/sql refuses hostile queries and changes nothing', () => {
  it(`has at least 50 hostile queries (${HOSTILE.length})`, () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(50);
  });

  it('answers 400 with the SPEC body to each, and no table, row, file or outside request results', async () => {
    const engineBefore = await settledEngineSnapshot();
    const filesBefore = await listing(dataDir);
    const answers: string[] = [];
    for (const [what, query] of HOSTILE) {
      const r = await sql(query());
      answers.push(`${r.status} ${what}: ${JSON.stringify(r.body).slice(0, 160)}`);
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body, what).toEqual({ error: true, reason: expect.stringMatching(/^query: /), message: expect.stringMatching(/^query: /) });
    }
    expect(await engineSnapshot()).toEqual(engineBefore);
    expect(await listing(dataDir)).toEqual(filesBefore);
    expect(await readFile(sentinel, 'utf8')).toBe(SENTINEL_BYTES);
    for (const name of ['out.csv', 'outfile.csv', 'outfile2.csv']) expect(existsSync(path.join(dataDir, name))).toBe(false);
    expect(requestsSeen, answers.join('\n')).toBe(0);
    if (process.env.SHOW_REFUSALS) console.log(answers.join('\n'));
    // The service's own connection still writes (readonly never leaked to it).
    const project = await createProject(server, { plan: 'pro' });
    const tracked = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'after', userId: 'u' },
    });
    expect(tracked.status).toBe(200);
    await server.eventsVisible();
  });

  it('binds parameter values as values: quotes, backslashes, newlines and ; come back exactly', async () => {
    const values = ["'); DROP TABLE events; --", 'a\\b', 'end\\', "\\'", 'line\nbreak\ttab', '\\N', 'emoji 😀 ；'];
    for (const value of values) {
      const r = await sql('SELECT {v:String} AS v, length({v:String}) AS n', { v: value });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.rows, JSON.stringify(value)).toEqual([{ v: value, n: String(Buffer.byteLength(value)) }]);
    }
    const typed = await sql('SELECT {n:UInt8} + 1 AS n, {b:Bool} AS b', { n: 41, b: true });
    expect(typed.status, JSON.stringify(typed.body)).toBe(200);
    expect(typed.body.rows).toEqual([{ n: 42, b: true }]);
  });

  it('still answers ordinary read-only queries: CTEs, UNION, JOIN, windows, comments, a trailing ;', async () => {
    const cases: [string, unknown[]][] = [
      ['WITH t AS (SELECT number AS n FROM numbers(3)) SELECT sum(n) AS s FROM t', [{ s: '3' }]],
      ['SELECT x FROM (SELECT 1 AS x UNION ALL SELECT 2) ORDER BY x', [{ x: 1 }, { x: 2 }]],
      // One literal, whatever it looks like: ClickHouse's parser decides, and events stays.
      ["SELECT 'a\\'; DROP TABLE events; --' AS s", [{ s: "a'; DROP TABLE events; --" }]],
      ['SELECT a.n AS n FROM (SELECT 1 AS n) AS a INNER JOIN (SELECT 1 AS n) AS b ON a.n = b.n -- the ; in a comment\n', [{ n: 1 }]],
      [
        'SELECT number AS n, sum(number) OVER (ORDER BY number) AS c FROM numbers(2);',
        [
          { n: '0', c: '0' },
          { n: '1', c: '1' },
        ],
      ],
      ["SELECT ';' AS s /* ; */", [{ s: ';' }]],
      ["SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'events'", [{ n: '1' }]],
    ];
    for (const [query, rows] of cases) {
      const r = await sql(query);
      expect(r.status, `${query}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.rows, query).toEqual(rows);
    }
  });
});

describe('the documented examples pass the guard', () => {
  it('every ```sql example of docs/clickhouse.md runs through POST /admin/sql', async () => {
    const docs = await readFile(new URL('../../docs/clickhouse.md', import.meta.url), 'utf8');
    const blocks = [...docs.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    expect(blocks.length).toBeGreaterThan(0);
    for (const query of blocks) {
      const r = await sql(query, { project_id: '0193c1d2-7a4b-7c3e-9f00-5b1e2d3c4a5f' });
      expect(r.status, `${query}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
});

describe('the read-only chDB session itself (the engine, without the parse-tree guard)', () => {
  const open = () =>
    chdbReadonlyEngine(path.join(dataDir, 'clickhouse')).open(
      { timeoutMs: 5_000, maxResultRows: 100, maxThreads: 1, maxResultBytes: 1024 * 1024 },
      {},
    );
  const refusal = async (statement: string) => {
    const session = await open();
    try {
      await session.run(statement, 'JSONEachRow');
      return 'ran';
    } catch (error) {
      return String(error);
    } finally {
      session.close();
    }
  };

  it.each([
    ['SET readonly = 0', /READONLY|readonly mode/],
    ['SET max_execution_time = 1000', /READONLY|readonly mode/],
    ['CREATE TABLE pwned_engine (a Int32) ENGINE = Memory', /READONLY|readonly mode/],
    ["INSERT INTO events (event_name) VALUES ('x')", /READONLY|readonly mode/],
    ['DROP TABLE events', /READONLY|readonly mode/],
    ["SELECT * FROM url('http://127.0.0.1:9/x', 'LineAsString')", /READONLY|readonly mode/],
    ["SELECT * FROM remote('127.0.0.1:9', system.one)", /READONLY|readonly mode/],
    ["SELECT * FROM executable('ls', 'LineAsString', 'x String')", /READONLY|readonly mode/],
    ["SELECT * FROM s3('http://127.0.0.1:9/bucket-name/key', 'LineAsString')", /READONLY|readonly mode/],
  ])('refuses %s in readonly mode', async (statement, expected) => {
    expect(await refusal(statement)).toMatch(expected);
    expect(requestsSeen).toBe(0);
  });

  it('a second statement of a script is refused by the engine too', async () => {
    expect(await refusal('SELECT 1; CREATE TABLE pwned_script (a Int32) ENGINE = Memory')).toMatch(/READONLY|readonly mode/);
    const [row] = await server.clickhouseRows<{ n: string }>("SELECT count() AS n FROM system.tables WHERE name LIKE 'pwned%'");
    expect(Number(row?.n)).toBe(0);
  });
});
