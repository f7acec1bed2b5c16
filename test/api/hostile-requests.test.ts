import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_OUTPUT_FORMATS, SERVED_OUTPUT_FORMATS } from '../../src/api/clickhouse/ch-formats.js';
import { findFreePort } from '../../src/core/net.js';
import { caseTimeLimit } from '../helpers/generated-cases.js';
import { PROCESS_TEST_TIMEOUT_MS, type ServiceProcess } from '../helpers/process.js';
import { call, serviceSetup, startService } from '../helpers/service.js';

/*
 * Requests meant to stop or hold a real `npm start` process (issue 37), on both of its ports: the
 * API's, with the ClickHouse interface under /clickhouse, and the interface's own. Odd request
 * targets, every output format (served and refused), and a fuzz of request lines and headers
 * over raw sockets. After each, the process still answers: GET /healthz 200, and a query at once.
 */

let service: ServiceProcess;
let apiPort: number;
let chPort: number;
let auth: string;
let base: string;

beforeAll(async () => {
  const setup = await serviceSetup();
  chPort = await findFreePort();
  setup.env.CLICKHOUSE_INTERFACE_PORT = String(chPort);
  // The fuzz sends thousands of requests from one address.
  setup.env.RATE_LIMIT_AUTH_FAILURES = 'off';
  setup.env.RATE_LIMIT_API = 'off';
  service = await startService(setup);
  base = setup.base;
  apiPort = Number(new URL(base).port);
  const account = await call(base, 'POST', '/api/v1/admin/accounts', {
    bearer: setup.operatorToken,
    body: { email: `hostile-${randomUUID()}@example.com`, plan: 'pro' },
  });
  const project = await call(base, 'POST', '/api/v1/projects', { bearer: account.body.admin_token, body: { name: 'hostile' } });
  const credential = await call(base, 'POST', `/api/v1/projects/${project.body.id}/clickhouse-credentials`, {
    bearer: account.body.admin_token,
  });
  expect(credential.status, JSON.stringify(credential.body)).toBe(201);
  auth = `Basic ${Buffer.from(`${credential.body.username}:${credential.body.password}`).toString('base64')}`;
}, PROCESS_TEST_TIMEOUT_MS);

/** Writes `request` as it is and reads until the server closes (or `ms` pass): what came back, as latin1. */
function raw(port: number, request: string | Buffer, ms = 10_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', done);
    socket.on('close', done);
    socket.write(request);
  });
}

/** The process still serves: the API's health check, and the interface's ping on its own port. */
async function stillServing(after: string): Promise<void> {
  expect(service.exit, `${after}\n${service.describe().slice(-3_000)}`).toBeUndefined();
  const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
  expect(health.status, after).toBe(200);
  const ping = await fetch(`http://127.0.0.1:${chPort}/ping`, { signal: AbortSignal.timeout(10_000) });
  expect(ping.status, after).toBe(200);
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);

/** Request targets that once threw, or could throw, out of a handler. */
const ODD_TARGETS: string[] = [
  '//',
  '///',
  '//?query=SELECT%201',
  '//x/../?query=SELECT%201',
  // Read by the URL parser, but given a null path by Koa's (the fuzz found it, seed 466188).
  '//clickhouse#user[@&',
  '*',
  'http://example.com/?query=SELECT%201',
  'http://[::1/',
  'https://user:pw@example.com:99999/',
  'example.com:443',
  '/%zz%',
  '/?query=%E0%A4%A',
  '/?query=SELECT%201&query_id=%0d%0aX-Injected:%201',
  '/?query=SELECT%201&query_id=%00',
  '/?user=%ff%fe&password=%c0',
  '/?query=SELECT%20%7Bx:String%7D&param_x=%ZZ',
  `/${'a'.repeat(70_000)}`,
  `/?query=${'%41'.repeat(30_000)}`,
];

describe('odd request targets', () => {
  const ports = () => [
    { name: 'the interface’s own port', port: chPort, prefix: '' },
    { name: 'the API port’s /clickhouse', port: apiPort, prefix: '/clickhouse' },
    { name: 'the API port', port: apiPort, prefix: '/api/v1' },
  ];
  for (const method of ['POST', 'GET', 'OPTIONS']) {
    it(`${method}: each is answered (or its connection closed), and the process serves on`, async () => {
      for (const { name, port, prefix } of ports()) {
        for (const target of ODD_TARGETS) {
          const line = target.startsWith('/') ? `${prefix}${target}` : target;
          const answer = await raw(
            port,
            `${method} ${line} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${auth}\r\nContent-Length: 8\r\nConnection: close\r\n\r\nSELECT 1`,
          );
          const about = `${method} ${line.slice(0, 80)} on ${name}: ${answer.slice(0, 200)}`;
          // Never a 5xx for a target: a clear answer in the port's form, or a closed connection.
          expect(statusOf(answer) < 500, about).toBe(true);
          await stillServing(about);
        }
      }
    }, 240_000);
  }

  it('raw bytes in the request line and the headers', async () => {
    for (const port of [chPort, apiPort]) {
      for (const bytes of [
        Buffer.concat([Buffer.from('GET /'), Buffer.from([0x80, 0xff, 0xfe, 0x00, 0x7f]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')]),
        Buffer.concat([
          Buffer.from('POST /?query=SELECT%201 HTTP/1.1\r\nX-ClickHouse-User: '),
          Buffer.from([0xc3, 0x28, 0xff]),
          Buffer.from('\r\n\r\n'),
        ]),
        Buffer.from('\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'), // a TLS hello on a plain port
        Buffer.from('GET / HTTP/9.9\r\n\r\n'),
        Buffer.from('\r\n\r\n\r\n'),
      ]) {
        await raw(port, bytes, 5_000);
        await stillServing(`bytes ${bytes.toString('hex').slice(0, 60)} on ${port}`);
      }
    }
  }, 120_000);
});

/** The query each format is asked for: two columns of three rows, or what the format needs. */
const queryFor = (format: string) => {
  if (format === 'Prometheus') return "SELECT 'requests_total' AS name, number AS value FROM numbers(3)";
  if (format === 'Npy' || format === 'RawBLOB' || format.startsWith('LineAsString'))
    return 'SELECT toString(number * 7) AS s FROM numbers(3)';
  return 'SELECT number AS n, toString(number * 7) AS s FROM numbers(3)';
};
const formatQuery = (format: string) => (format === 'Npy' ? 'SELECT number * 7 AS n FROM numbers(3)' : queryFor(format));

/** What varies from one run to the next in the engine's own output: the time it took, its progress lines. */
function steady(format: string, bytes: Buffer): string {
  if (!/JSON|XML/.test(format) || /^(BSON|MsgPack)/.test(format)) return bytes.toString('base64');
  return bytes
    .toString('utf8')
    .replace(/("elapsed(_ns)?":\s*)"?[\d.e+-]+"?/g, '$10')
    .replace(/<elapsed>[^<]*<\/elapsed>/g, '<elapsed>0</elapsed>')
    .split('\n')
    .filter((line) => !line.startsWith('{"progress"'))
    .join('\n');
}

async function ask(
  query: string,
  extra: Record<string, string> = {},
): Promise<{ status: number; code: string | null; bytes: Buffer; ms: number }> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${chPort}/?${new URLSearchParams({ query, ...extra })}`, {
    headers: { authorization: auth },
    signal: AbortSignal.timeout(30_000),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, code: response.headers.get('x-clickhouse-exception-code'), bytes, ms: performance.now() - started };
}

/** A query answered at once after a format: the lane was not held. */
async function selectOneAtOnce(after: string): Promise<void> {
  const r = await ask('SELECT 1');
  expect([r.status, r.bytes.toString()], after).toEqual([200, '1\n']);
  expect(r.ms, after).toBeLessThan(5_000);
}

describe('output formats', () => {
  type Session = { queryAsync(q: string): Promise<{ bytes(): Uint8Array }>; close(): void };
  let engine: Session;
  let engineDir: string;
  beforeAll(async () => {
    // The engine's own answer, from chDB in this test process (its own data directory).
    engineDir = await mkdtemp(path.join(tmpdir(), 'formats-engine-'));
    const { Session } = createRequire(import.meta.url)('chdb') as { Session: new (dir: string) => Session };
    engine = new Session(engineDir);
  });
  afterAll(async () => {
    engine?.close();
    await rm(engineDir, { recursive: true, force: true });
  });

  it('every served format answers exactly what the engine writes for it; a query of any format follows at once', async () => {
    const differ: string[] = [];
    for (const format of SERVED_OUTPUT_FORMATS) {
      const query = `${formatQuery(format)} FORMAT ${format}`;
      // As default_format: the engine's print of `FORMAT Null` does not parse again (a limit of the
      // FORMAT clause path, not of the format).
      const r = await ask(formatQuery(format), { default_format: format });
      expect([format, r.status, r.bytes.toString().slice(0, 300)]).toEqual([format, 200, expect.anything()]);
      const own = Buffer.from((await engine.queryAsync(query)).bytes());
      // Avro and ORC write a random sync marker or the time: their size and header must agree.
      if (format === 'Avro' || format === 'ORC') {
        expect([format, r.bytes.length, r.bytes.subarray(0, 3).toString()]).toEqual([format, own.length, own.subarray(0, 3).toString()]);
      } else if (steady(format, r.bytes) !== steady(format, own)) differ.push(format);
      await selectOneAtOnce(`after ${format}`);
    }
    expect(differ).toEqual([]);
  }, 300_000);

  it('every refused format is answered at once with UNKNOWN_FORMAT (73), as default_format and as a FORMAT clause; the next query runs at once', async () => {
    for (const format of REFUSED_OUTPUT_FORMATS) {
      for (const r of [await ask(`SELECT 1 FORMAT ${format}`), await ask('SELECT 1', { default_format: format })]) {
        expect([format, r.status, r.code], r.bytes.toString()).toEqual([format, 404, '73']);
        expect(r.bytes.toString()).toMatch(/^Code: 73\. DB::Exception: (Format \S+ is not served by this interface|Unknown output format)/);
        expect(r.ms).toBeLessThan(10_000);
      }
      await selectOneAtOnce(`after ${format}`);
    }
  }, 300_000);
});

/** A small deterministic generator (mulberry32), so a failing case can be replayed from its seed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  '/',
  '//',
  '?',
  '&',
  '=',
  '%',
  '%zz',
  '%00',
  '%ff',
  '%E0%A4',
  '..',
  '#',
  '*',
  ':',
  '@',
  '[',
  ']',
  ' ',
  '\t',
  'query',
  'query_id',
  'default_format',
  'Template',
  'user',
  'param_',
  'clickhouse',
  'api',
  'v1',
  'SELECT%201',
  'http://',
  'ping',
  '\u00e9',
  '\u0000',
  '\uffff',
];
const METHODS = ['GET', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'DELETE', 'PATCH', 'TRACE', 'CONNECT', 'BREW', 'G\u00c9T', ''];
const HEADERS = [
  'Authorization',
  'X-ClickHouse-User',
  'X-ClickHouse-Key',
  'X-ClickHouse-Format',
  'X-ClickHouse-Database',
  'Content-Encoding',
  'Content-Length',
  'Transfer-Encoding',
  'Accept-Encoding',
  'Host',
  'X-Forwarded-For',
  'Expect',
  'Cookie',
];
const VALUES = [
  '',
  'gzip',
  'br',
  'chunked',
  '-1',
  '99999999999',
  'Basic %%%',
  `Basic ${Buffer.from(':').toString('base64')}`,
  'Template',
  '100-continue',
  '\u00ff\u00fe',
  'x'.repeat(9_000),
  '0',
];

describe('a fuzz of request lines and headers (bounded in time)', () => {
  it('whatever comes, nothing ends the process and nothing is answered 5xx by a target or a header', async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
    const random = generator(seed);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
    const until = Date.now() + Number(process.env.FUZZ_MS ?? caseTimeLimit(10_000));
    let sent = 0;
    const fives: string[] = [];
    while (Date.now() < until) {
      const target = Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(PIECES)).join('');
      const prefix = pick(['', '/', '/clickhouse', '/clickhouse/', '/api/v1/', '']);
      const lines = [`${pick(METHODS)} ${prefix}${target} HTTP/1.${random() < 0.9 ? 1 : 0}`, 'Host: 127.0.0.1'];
      for (let i = Math.floor(random() * 4); i > 0; i--) lines.push(`${pick(HEADERS)}: ${pick(VALUES)}`);
      if (random() < 0.5) lines.push(`Authorization: ${auth}`);
      const request = Buffer.from(`${lines.join('\r\n')}\r\nConnection: close\r\n\r\n${random() < 0.3 ? 'SELECT 1' : ''}`, 'latin1');
      const port = random() < 0.5 ? chPort : apiPort;
      const answer = await raw(port, request, 3_000);
      // 501 is the router's answer to a method it does not know, 503 a stop's; any other 5xx is a defect.
      const status = statusOf(answer);
      if (status >= 500 && status !== 503 && status !== 501)
        fives.push(`${status} for ${request.toString('latin1').slice(0, 200)} on ${port}`);
      sent += 1;
      if (sent % 50 === 0) await stillServing(`fuzz seed ${seed}, request ${sent}`);
    }
    await stillServing(`fuzz seed ${seed}, after ${sent} requests`);
    expect(fives, `fuzz seed ${seed}`).toEqual([]);
    expect(sent).toBeGreaterThan(50);
  }, 240_000);
});
