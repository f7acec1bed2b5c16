import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient } from '@clickhouse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClickhouseHandler, createClickhouseServer } from '../../src/api/clickhouse/ch-interface.js';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The ClickHouse interface's bounds (docs/clickhouse-interface.md), on a server with small ones:
 * rows and bytes of an answer, the per-credential rate limit, the failed-authentication budget it
 * shares with the API, a client that goes away, and the interface on a port of its own.
 */

const server = useTestServer({
  workers: false,
  env: {
    CLICKHOUSE_INTERFACE_MAX_ROWS: '1000000',
    CLICKHOUSE_INTERFACE_MAX_BYTES: '8MiB',
    RATE_LIMIT_AUTH_FAILURES: '3/min',
    RATE_LIMIT_API: '20/min',
    TRUSTED_PROXY_HOPS: '1',
  },
});
let own: TestProject;
let cred: TestClickhouseCredential;
let base: string;
/** Each test speaks from an address of its own (TRUSTED_PROXY_HOPS=1): budgets per address do not cross. */
let address = 0;
const from = () => ({ 'x-forwarded-for': `10.0.0.${++address}` });

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
});

describe('result bounds', () => {
  it('more rows than CLICKHOUSE_INTERFACE_MAX_ROWS: the engine stops the query with TOO_MANY_ROWS_OR_BYTES', async () => {
    const r = await chRequest(base, { query: 'SELECT number FROM numbers(2000000)' }, { auth: cred, headers: from() });
    // Before the first byte it is the status and header; after it, the framed end of the stream.
    if (r.status === 500) expect(r.headers.get('x-clickhouse-exception-code')).toBe('396');
    else expect([r.status, r.text.endsWith('__exception__\r\n')]).toEqual([200, true]);
    expect(r.text).toMatch(/Code: 396\. DB::Exception: Limit for result exceeded, max rows: 1\.00 million.*\(TOO_MANY_ROWS_OR_BYTES\)/);
  });

  it('past the bound after the answer began: the error ends the stream, framed as ClickHouse frames it, and the client throws it', async () => {
    const client = createClient({
      url: server.url,
      pathname: '/clickhouse',
      username: cred.username,
      password: cred.password,
      http_headers: from(),
    });
    try {
      // Blocks of 65,409 rows (2.5 MB of CSV) go out until the answer passes 8 MiB.
      const result = await client.query({ query: "SELECT number, repeat('x', 30) FROM numbers(500000)", format: 'CSV' });
      let rows = 0;
      const read = (async () => {
        for await (const batch of result.stream()) rows += batch.length;
      })();
      const error = await read.then(
        () => undefined,
        (e: unknown) => e as { code?: string; type?: string; cause?: { code?: string; type?: string } },
      );
      const thrown = error?.cause ?? error;
      expect([String(thrown?.code), thrown?.type], String(error)).toEqual(['396', 'TOO_MANY_ROWS_OR_BYTES']);
      expect(rows).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('more bytes than CLICKHOUSE_INTERFACE_MAX_BYTES: refused in ClickHouse’s form, after at most that many bytes', async () => {
    const r = await chRequest(base, { query: "SELECT repeat('x', 1000) FROM numbers(20000)" }, { auth: cred, headers: from() });
    // Counted as the bytes flow (test/api/clickhouse-stream-bounds.test.ts): the first 8 MiB may
    // have gone out, then the framed error ends the answer.
    if (r.status === 200) expect(r.text.endsWith('__exception__\r\n')).toBe(true);
    else expect([r.status, r.headers.get('x-clickhouse-exception-code')]).toEqual([500, '396']);
    expect(r.text).toMatch(/Code: 396\. DB::Exception: Limit for result exceeded, max bytes: 8\.00 MiB\. \(TOO_MANY_ROWS_OR_BYTES\)/);
    expect(r.bytes.indexOf('\r\n__exception__\r\n')).toBeLessThanOrEqual(8 * 1024 * 1024);
  });
});

describe('budgets', () => {
  it('failed authentications spend the API’s budget of the address: past it, even a good credential waits', async () => {
    const headers = from();
    for (let i = 0; i < 3; i++) {
      const r = await chRequest(base, { query: 'SELECT 1' }, { auth: { ...cred, password: `wrong-${i}` }, headers });
      expect(r.headers.get('x-clickhouse-exception-code')).toBe('516');
    }
    const refused = await chRequest(base, { query: 'SELECT 1' }, { auth: cred, headers });
    expect([refused.status, refused.headers.get('x-clickhouse-exception-code')]).toEqual([429, '201']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same budget as the API's: one more failure there and the API refuses the address too,
    // a good token included (a budget of its own would have allowed two more failures).
    const wrong = await server.request('GET', '/api/v1/projects', { bearer: 'fba_wrong', headers });
    expect(wrong.status).toBe(401);
    const api = await server.request('GET', '/api/v1/projects', { bearer: own.account.adminToken, headers });
    expect(api.status).toBe(429);
  });

  it('each credential has the API’s rate limit of its own', async () => {
    const a = await createClickhouseCredential(server, own);
    const b = await createClickhouseCredential(server, own);
    const codes: (string | null)[] = [];
    for (let i = 0; i < 21; i++) {
      codes.push((await chRequest(base, { query: 'SELECT 1' }, { auth: a, headers: from() })).headers.get('x-clickhouse-exception-code'));
    }
    expect(codes).toEqual([...Array(20).fill(null), '201']);
    expect((await chRequest(base, { query: 'SELECT 1' }, { auth: b, headers: from() })).text).toBe('1\n');
  });
});

describe('its own port', () => {
  let own_: Server;
  it('serves the same interface at /, and /ping', async () => {
    const handler = createClickhouseHandler({ ...server.services, operatorToken: server.operatorToken }, server.services.logger);
    own_ = createClickhouseServer(handler, server.services.config.http).listen(0, '127.0.0.1');
    await new Promise((resolve) => own_.once('listening', resolve));
    const port = (own_.address() as AddressInfo).port;
    try {
      expect((await chRequest(`http://127.0.0.1:${port}`, {}, { path: '/ping' })).text).toBe('Ok.\n');
      const r = await chRequest(`http://127.0.0.1:${port}`, { query: 'SELECT count() FROM events' }, { auth: cred, headers: from() });
      expect([r.status, r.text]).toEqual([200, '0\n']);
    } finally {
      own_.closeAllConnections();
      await new Promise((resolve) => own_.close(resolve));
    }
  });
});
