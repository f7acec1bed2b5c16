import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { ClickHouseError, createClient } from '@clickhouse/client';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Real ClickHouse clients, unchanged, against the interface (issue 29): the official Node client,
 * the official web client in Chromium, a second independent client from npm, and the curl recipes
 * of ClickHouse's HTTP-interface documentation adapted to this host and a credential.
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let cred: TestClickhouseCredential;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  await seedAnalytics(server, own.id, 'own');
  cred = await createClickhouseCredential(server, own);
});

const official = (extra: Parameters<typeof createClient>[0] = {}) =>
  createClient({ url: server.url, pathname: '/clickhouse', username: cred.username, password: cred.password, ...extra });

describe('@clickhouse/client (Node), unchanged', () => {
  it('ping, query as JSON and as a stream, query_params, CSV', async () => {
    const client = official();
    try {
      expect(await client.ping()).toEqual({ success: true });
      const rows = await (
        await client.query({
          query: 'SELECT event_name, count() AS n FROM events GROUP BY event_name ORDER BY event_name',
          format: 'JSONEachRow',
        })
      ).json<{ event_name: string; n: string | number }>();
      expect(rows.map((row) => [row.event_name, Number(row.n)])).toEqual([
        ['feedback_list', 1],
        ['own_custom', 1],
        ['submit_feedback', 1],
      ]);
      const streamed: unknown[] = [];
      const result = await client.query({ query: 'SELECT number FROM numbers(100000)', format: 'JSONEachRow' });
      for await (const batch of result.stream<{ number: number }>()) for (const row of batch) streamed.push(row.json());
      expect(streamed).toHaveLength(100000);
      expect(streamed[99999]).toEqual({ number: 99999 });
      const params = await (
        await client.query({
          query: 'SELECT {name:String} AS name, {n:UInt32} + 1 AS next, {day:Date} AS day',
          query_params: { name: "o'neil\\t", n: 41, day: '2026-01-31' },
          format: 'JSONEachRow',
        })
      ).json();
      expect(params).toEqual([{ name: "o'neil\\t", next: 42, day: '2026-01-31' }]);
      const csv = await (
        await client.query({ query: 'SELECT number, toString(number) AS s FROM numbers(3)', format: 'CSVWithNames' })
      ).text();
      expect(csv).toBe('"number","s"\n0,"0"\n1,"1"\n2,"2"\n');
    } finally {
      await client.close();
    }
  });

  it('clickhouse_settings with compression on, both ways', async () => {
    const client = official({ compression: { request: true, response: true } });
    try {
      const rows = await (
        await client.query({
          query: 'SELECT toUInt64(12345678901234) AS big FROM numbers(2)',
          format: 'JSONEachRow',
          clickhouse_settings: { output_format_json_quote_64bit_integers: 1, date_time_output_format: 'iso' },
        })
      ).json();
      expect(rows).toEqual([{ big: '12345678901234' }, { big: '12345678901234' }]);
    } finally {
      await client.close();
    }
  });

  it('a refused query surfaces as ClickHouseError with its code', async () => {
    const client = official();
    try {
      const error = await client.query({ query: 'INSERT INTO events SELECT * FROM events', format: 'JSONEachRow' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ClickHouseError);
      expect((error as ClickHouseError).code).toBe('164');
      const denied = await client.query({ query: 'SELECT * FROM system.parts' }).catch((e: unknown) => e);
      expect(denied).toMatchObject({ code: '497', type: 'ACCESS_DENIED' });
      const wrong = createClient({ url: server.url, pathname: '/clickhouse', username: cred.username, password: 'nope' });
      expect(await wrong.query({ query: 'SELECT 1' }).catch((e: unknown) => e)).toMatchObject({
        code: '516',
        type: 'AUTHENTICATION_FAILED',
      });
      await wrong.close();
    } finally {
      await client.close();
    }
  });
});

describe('a second, independent client from npm (clickhouse)', () => {
  it('runs a query', async () => {
    const require = createRequire(import.meta.url);
    const { ClickHouse } = require('clickhouse') as {
      ClickHouse: new (options: Record<string, unknown>) => { query(q: string): { toPromise(): Promise<unknown[]> } };
    };
    const port = new URL(server.url).port;
    const client = new ClickHouse({
      url: `http://127.0.0.1/clickhouse`,
      port,
      basicAuth: { username: cred.username, password: cred.password },
      format: 'json',
      isSessionPerQuery: false,
      config: { session_timeout: 60 },
    });
    const rows = await client.query('SELECT count() AS n, min(event_name) AS first FROM events').toPromise();
    expect(rows).toEqual([{ n: 3, first: 'feedback_list' }]);
  });
});

describe('the curl recipes of ClickHouse’s HTTP-interface documentation', () => {
  const run = promisify(execFile);
  const curl = async (args: string[], input?: string) => {
    if (input === undefined) return (await run('curl', ['-sS', ...args])).stdout;
    return new Promise<string>((resolve, reject) => {
      const child = execFile('curl', ['-sS', ...args], (error, stdout) => (error ? reject(error) : resolve(stdout)));
      child.stdin?.end(input);
    });
  };
  const at = () => `${server.url}/clickhouse/`;
  const user = () => `${cred.username}:${cred.password}`;

  it('answers the documentation’s outputs', async () => {
    expect(await curl([`${server.url}/clickhouse/ping`])).toBe('Ok.\n');
    expect(await curl(['-u', user(), `${at()}?query=SELECT%201`])).toBe('1\n');
    expect(await curl(['-u', user(), at(), '--data-binary', '@-'], 'SELECT 1\n')).toBe('1\n');
    expect(await curl(['-u', user(), `${at()}?query=SELECT`, '--data-binary', '@-'], '1\n')).toBe('1\n');
    expect(
      await curl(['-H', `X-ClickHouse-User: ${cred.username}`, '-H', `X-ClickHouse-Key: ${cred.password}`, at(), '-d', '@-'], 'SELECT 1\n'),
    ).toBe('1\n');
    expect(await curl([`${at()}?user=${cred.username}&password=${cred.password}`, '-d', '@-'], 'SELECT 1\n')).toBe('1\n');
    // Row numbers came to Pretty after the documentation's example was written: without them, its output.
    expect(
      await curl(['-u', user(), `${at()}?output_format_pretty_row_numbers=0`, '--data-binary', '@-'], 'SELECT 1 FORMAT Pretty\n'),
    ).toBe(['┏━━━┓', '┃ 1 ┃', '┡━━━┩', '│ 1 │', '└───┘', ''].join('\n'));
    expect(
      await curl(['-u', user(), `${at()}?param_id=2&param_phrase=test`, '-d', 'SELECT {id:UInt8} AS id, {phrase:String} AS phrase']),
    ).toBe('2\ttest\n');
    const gz = await run('sh', [
      '-c',
      `curl -sS -u '${user()}' '${at()}?enable_http_compression=1' -H 'Accept-Encoding: gzip' -d 'SELECT number FROM numbers(3)' | gunzip`,
    ]);
    expect(gz.stdout).toBe('0\n1\n2\n');
    const headers = await curl(['-u', user(), '-D', '-', '-o', '/dev/null', `${at()}?query=SELECT%201&query_id=doc-1`]);
    expect(headers).toMatch(/\r\nX-ClickHouse-Query-Id: doc-1\r\n/i);
    expect(headers).toMatch(/\r\nX-ClickHouse-Format: TabSeparated\r\n/i);
    expect(headers).toMatch(/\r\nX-ClickHouse-Timezone: /i);
    expect(headers).toMatch(/\r\nX-ClickHouse-Summary: \{"read_rows"/i);
    // ClickHouse asks for no challenge: wget sends the credential up front.
    const wget = await run('wget', [
      '-nv',
      '-O-',
      '--auth-no-challenge',
      '--user',
      cred.username,
      '--password',
      cred.password,
      `${at()}?query=SELECT 1`,
    ]);
    expect(wget.stdout).toBe('1\n');
  });
});

describe('@clickhouse/client-web in Chromium', () => {
  it.skipIf(!existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'))(
    'ping, JSONEachRow, query_params and a ClickHouseError, unchanged',
    async () => {
      const bundle = await build({
        stdin: { contents: "export { createClient, ClickHouseError } from '@clickhouse/client-web';", resolveDir: process.cwd() },
        bundle: true,
        format: 'iife',
        globalName: 'ClickHouseWeb',
        write: false,
        platform: 'browser',
        logLevel: 'silent',
      });
      const browser = await chromium.launch({
        executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      });
      try {
        const page = await browser.newPage();
        // A page of the same origin as the interface.
        await page.goto(`${server.url}/clickhouse/ping`);
        await page.addScriptTag({ content: bundle.outputFiles[0]?.text ?? '' });
        const outcome = await page.evaluate(
          async ({ url, username, password }) => {
            const { createClient, ClickHouseError } = (globalThis as unknown as { ClickHouseWeb: typeof import('@clickhouse/client-web') })
              .ClickHouseWeb;
            const client = createClient({ url, pathname: '/clickhouse', username, password });
            const ping = await client.ping();
            const rows = await (await client.query({ query: 'SELECT count() AS n FROM events', format: 'JSONEachRow' })).json();
            const params = await (
              await client.query({ query: 'SELECT {x:UInt8} * 2 AS y', query_params: { x: 21 }, format: 'JSONEachRow' })
            ).json();
            const refused = await client.query({ query: 'SELECT * FROM system.parts' }).catch((e: unknown) => e);
            await client.close();
            return {
              ping: ping.success,
              rows,
              params,
              refused: refused instanceof ClickHouseError ? [refused.code, refused.type] : String(refused),
            };
          },
          { url: server.url, username: cred.username, password: cred.password },
        );
        expect(outcome).toEqual({ ping: true, rows: [{ n: 3 }], params: [{ y: 42 }], refused: ['497', 'ACCESS_DENIED'] });
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
