import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClickhouseHandler, createClickhouseServer } from '../../src/api/clickhouse/ch-interface.js';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The ClickHouse interface with a ClickHouse server (CLICKHOUSE_URL), as far as this machine
 * allows: there is no server here, so a local HTTP listener stands in for one. It records every
 * request the service sends and answers it by running the request on chDB with the request's own
 * settings and parameters, as a server applies them (settings before the query, readonly last).
 * The test reads the exact requests: every statement carries readonly = 1, the row filters and
 * the limits as request settings; the streamed read carries its FORMAT and
 * cancel_http_readonly_queries_on_client_close = 1. What remains unproven is a real server's
 * reading of the same requests (docs/clickhouse-interface.md).
 */

type Recorded = { query: string; settings: Record<string, string>; params: Record<string, string> };

const server = useTestServer({ workers: false });
let own: TestProject;
let other: TestProject;
let cred: TestClickhouseCredential;
let fake: Server;
let iface: Server;
let ifaceUrl: string;
const recorded: Recorded[] = [];

type ChdbSession = {
  queryAsync(q: string, o: { format: string }): Promise<unknown>;
  queryStream(q: string, o: { format: string }): AsyncIterable<{ raw(): Uint8Array }>;
  close(): void;
};

const NOT_SETTINGS = new Set(['query', 'database', 'query_id', 'default_format', 'session_id', 'user', 'password']);
const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/** The read figures the stand-in server reports in its X-ClickHouse-Summary. */
const SERVER_SUMMARY = { read_rows: '4242', read_bytes: '67872', written_rows: '0', written_bytes: '0', total_rows_to_read: '4242' };

/** A stand-in for a ClickHouse server: records each request and runs it on chDB as a server would. */
function startFakeServer(dataPath: string): Promise<Server> {
  const require = createRequire(import.meta.url);
  const { Session } = require('chdb') as { Session: new (p: string) => ChdbSession };
  const fakeServer = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/ping') return void res.end('Ok.\n');
    const body = await bodyOf(req);
    const query = [url.searchParams.get('query'), body].filter((part) => part).join('\n');
    const settings: Record<string, string> = {};
    const params: Record<string, string> = {};
    for (const [name, value] of url.searchParams) {
      if (name.startsWith('param_')) params[name.slice(6)] = value;
      else if (!NOT_SETTINGS.has(name)) settings[name] = value;
    }
    recorded.push({ query, settings, params });
    const session = new Session(dataPath);
    try {
      const ordered = Object.entries(settings).sort(([a], [b]) => Number(a === 'readonly') - Number(b === 'readonly'));
      for (const [name, value] of ordered) {
        if (name === 'cancel_http_readonly_queries_on_client_close') continue; // a server's HTTP setting, unknown to chDB's client
        await session.queryAsync(`SET ${name} = ${/^-?\d+(\.\d+)?$/.test(value) ? value : literal(value)}`, { format: 'TSV' });
      }
      for (const [name, value] of Object.entries(params))
        await session.queryAsync(`SET param_${name} = ${literal(value)}`, { format: 'TSV' });
      // Whole, not streamed: chDB streams only SELECTs, and the sandbox's checks are EXPLAINs.
      // A server applies a trailing FORMAT to the output, EXPLAIN's included; chDB's client takes it apart.
      const clause = / \nFORMAT (\w+)$| FORMAT (\w+)$/.exec(query);
      const format = clause?.[1] ?? clause?.[2] ?? url.searchParams.get('default_format') ?? 'TabSeparated';
      const text = clause ? query.slice(0, clause.index) : query;
      const answer = (await session.queryAsync(text, { format })) as { bytes(): Uint8Array };
      // A server's summary; the read figures are the stand-in's own (chDB does not report them), recognisable in the test.
      res.setHeader('X-ClickHouse-Summary', JSON.stringify({ ...SERVER_SUMMARY, elapsed_ns: '1000' }));
      res.end(answer.bytes());
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      res.statusCode = 500;
      res.setHeader('X-ClickHouse-Exception-Code', /Code: (\d+)/.exec(message)?.[1] ?? '1001');
      res.end(message);
    } finally {
      session.close();
    }
  });
  fakeServer.listen(0, '127.0.0.1');
  return new Promise((resolve) => fakeServer.once('listening', () => resolve(fakeServer)));
}

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'FOREIGN');
  cred = await createClickhouseCredential(server, own);
  fake = await startFakeServer(`${server.dataDir}/clickhouse`);
  stopWhenDone(() => closeServer(fake));
  const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  const config = { ...server.services.config, clickhouseUrl: fakeUrl };
  const handler = createClickhouseHandler(
    { ...server.services, config, clickhouse: createClient({ url: fakeUrl }), operatorToken: server.operatorToken },
    server.services.logger,
  );
  iface = createClickhouseServer(handler, config.http).listen(0, '127.0.0.1');
  await new Promise((resolve) => iface.once('listening', resolve));
  stopWhenDone(() => closeServer(iface));
  ifaceUrl = `http://127.0.0.1:${(iface.address() as AddressInfo).port}`;
});

/** Closes a listener now, its open connections with it. */
function closeServer(listener: Server): Promise<unknown> {
  listener.closeAllConnections();
  return new Promise((resolve) => listener.close(resolve));
}

describe('the ClickHouse interface with a ClickHouse server: the requests the service sends', () => {
  it('answers through the server, with only the own project’s rows', async () => {
    recorded.length = 0;
    const r = await chRequest(
      ifaceUrl,
      { query: 'SELECT count() AS n, groupUniqArray(toString(project_id)) AS p FROM events FORMAT JSONEachRow' },
      { auth: cred },
    );
    expect([r.status, r.text], r.text).toEqual([200, `${JSON.stringify({ n: 3, p: [own.id] })}\n`]);
  });

  it('every statement of the sandbox carries readonly, the row filters and the limits as request settings', () => {
    // The service's own reads of the engine's facts and settings (once, on its own connection) are not the sandbox's.
    const sandbox = recorded.filter(
      (request) =>
        !request.query.startsWith('SELECT version() AS version') &&
        !request.query.startsWith('SELECT name, value, type FROM system.settings'),
    );
    expect(sandbox.length).toBeGreaterThanOrEqual(5);
    for (const request of sandbox) {
      expect(request.settings, request.query).toMatchObject({ readonly: '1', allow_ddl: '0' });
      expect(Number(request.settings.max_execution_time)).toBeGreaterThan(0);
      expect(Number(request.settings.max_execution_time)).toBeLessThanOrEqual(60);
    }
    const filtered = sandbox.filter((request) => request.settings.additional_table_filters !== undefined);
    expect(filtered.length).toBeGreaterThan(0);
    for (const request of filtered) {
      expect(request.settings.additional_table_filters).toContain(`project_id = toUUID(\\'${own.id}\\')`);
      expect(request.settings.additional_table_filters).toContain("'system.tables':");
    }
    // The read itself: the statement the checks passed, with its FORMAT, a lane's row bound and cancellation on disconnect.
    const read = sandbox[sandbox.length - 1] as Recorded;
    expect(read.query).toMatch(/^SELECT \* FROM \(SELECT count\(\) AS n, .* FROM events\) FORMAT JSONEachRow$/);
    expect(read.settings).toMatchObject({
      cancel_http_readonly_queries_on_client_close: '1',
      max_result_rows: '10000000',
      result_overflow_mode: 'throw',
      max_memory_usage: String(512 * 1024 * 1024),
    });
    expect(read.settings.additional_table_filters).toContain(`project_id = toUUID(\\'${own.id}\\')`);
  });

  it('the server’s summary reaches X-ClickHouse-Summary; currentUser() goes as a parameter the service sets', async () => {
    recorded.length = 0;
    const r = await chRequest(
      ifaceUrl,
      { query: 'SELECT currentUser() AS u, count() AS n FROM events FORMAT JSONEachRow' },
      { auth: cred },
    );
    expect(r.text).toBe(`${JSON.stringify({ u: cred.username, n: 3 })}\n`);
    expect(JSON.parse(r.headers.get('x-clickhouse-summary') ?? '')).toMatchObject(SERVER_SUMMARY);
    const read = recorded[recorded.length - 1] as Recorded;
    expect(read.query).not.toContain(cred.username);
    expect(read.params.ch_interface_current_user).toBe(cred.username);
  });

  it('parameters go as param_<name>, never into the statement', async () => {
    recorded.length = 0;
    const r = await chRequest(ifaceUrl, { query: 'SELECT {s:String} AS s FORMAT JSONEachRow', param_s: "x\\'; DROP" }, { auth: cred });
    expect(r.text).toBe(`${JSON.stringify({ s: "x'; DROP" })}\n`);
    const read = recorded[recorded.length - 1] as Recorded;
    expect(read.query).not.toContain('DROP');
    expect(read.params.s).toBe("x\\'; DROP");
  });

  it.each([
    ['a scalar CTE of the view', 'WITH (SELECT groupArray(toString(project_id)) FROM events_daily_mv) AS s SELECT s'],
    ['system.parts', 'SELECT * FROM system.parts'],
    ['merge()', "SELECT * FROM merge('default', '^events$')"],
    ['a subquery lifting the filter', "SELECT * FROM (SELECT * FROM events SETTINGS additional_table_filters = {'events': '1'})"],
  ])('%s: refused before anything reads a table', async (_, query) => {
    recorded.length = 0;
    const r = await chRequest(ifaceUrl, { query }, { auth: cred });
    expect(r.status).not.toBe(200);
    expect(r.text.toLowerCase()).not.toContain('foreign');
    expect(r.text).not.toContain(other.id);
    // No request ran the statement itself: only the formatter and EXPLAIN saw it.
    for (const request of recorded)
      expect(request.query).toMatch(
        /^(SELECT formatQuerySingleLine|EXPLAIN |SELECT currentDatabase|SELECT lower\(name\)|SELECT name FROM system\.formats|SELECT version)/,
      );
  });
});
