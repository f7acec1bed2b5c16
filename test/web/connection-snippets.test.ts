import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionSnippets, serverOf, type ToolSnippet } from '../../web/src/lib/connection-snippets.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/*
 * The snippets of the dashboard's "Connect a tool" panel (web/src/lib/connection-snippets.ts), run
 * as printed: the @clickhouse/client one by Node with the project's installed client, the curl one
 * by bash. The ClickHouse interface itself is built elsewhere (issue 29), so a recording HTTP server
 * stands in for it here: what is proven is the request each snippet makes (path, HTTP Basic user
 * and password, query), which is what the interface reads.
 */
type Seen = { method: string; url: string; authorization: string; body: string };
let interfaceServer: Server;
let origin: string;
const seen: Seen[] = [];

beforeAll(async () => {
  interfaceServer = createServer((request: IncomingMessage, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization ?? '', body });
      // The client names the format in the query text (`FORMAT JSONEachRow`), as ClickHouse reads it.
      const format = /FORMAT JSONEachRow\s*$/.test(body) ? 'JSONEachRow' : 'TabSeparated';
      response.setHeader('X-ClickHouse-Format', format);
      response.setHeader('X-ClickHouse-Summary', '{"read_rows":"1"}');
      response.end(format === 'JSONEachRow' ? '{"event_name":"feedback_list","events":"2"}\n' : '1\n');
    });
  });
  await new Promise<void>((resolve) => interfaceServer.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(interfaceServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => interfaceServer.close(resolve));
});

const USERNAME = '0b6c1c7e-2f57-4a53-9d1f-8e7f3b0e9c11';
const PASSWORD = 'fbch_Q2xpY2tIb3VzZS1pbnRlcmZhY2UtcGFzc3dvcmQtMTIz';
const basic = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;

function snippet(id: string, values: { origin: string; password: string | null }): ToolSnippet {
  const found = connectionSnippets({ username: USERNAME, ...values }).find((s) => s.id === id);
  if (!found) throw new Error(`no ${id} snippet`);
  return found;
}

describe('the Connect a tool snippets', () => {
  it('@clickhouse/client, as printed, queries <origin>/clickhouse with the credential (HTTP Basic)', async () => {
    // Inside the repository, so `@clickhouse/client` resolves to the installed package.
    const dir = await mkdtemp(path.join(root, 'node_modules', '.snippet-'));
    try {
      const file = path.join(dir, 'snippet.mjs');
      await writeFile(file, snippet('node', { origin, password: PASSWORD }).text);
      seen.length = 0;
      const { stdout } = await run(process.execPath, [file], { cwd: root, timeout: 20_000 });
      expect(stdout.trim()).toBe("[ { event_name: 'feedback_list', events: '2' } ]");
      expect(seen).toHaveLength(1);
      const [request] = seen;
      expect(request?.method).toBe('POST');
      // @clickhouse/client 1.x asks for the pathname itself, without a trailing slash: the interface must answer `/clickhouse?…`.
      expect(request?.url).toMatch(/^\/clickhouse\?query_id=/);
      expect(request?.authorization).toBe(basic);
      expect(request?.body).toBe(
        'SELECT event_name, count() AS events FROM events GROUP BY event_name ORDER BY events DESC \nFORMAT JSONEachRow',
      );

      // Without the password on screen, it reads CLICKHOUSE_PASSWORD.
      await writeFile(file, snippet('node', { origin, password: null }).text);
      seen.length = 0;
      await run(process.execPath, [file], { cwd: root, timeout: 20_000, env: { ...process.env, CLICKHOUSE_PASSWORD: PASSWORD } });
      expect(seen[0]?.authorization).toBe(basic);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('curl, as printed, sends both queries to <origin>/clickhouse/ with the credential', async () => {
    for (const [password, env] of [
      [PASSWORD, {}],
      [null, { CLICKHOUSE_PASSWORD: PASSWORD }],
    ] as const) {
      seen.length = 0;
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', snippet('curl', { origin, password }).text], {
        timeout: 20_000,
        env: { ...process.env, ...env },
      });
      expect(stdout).toBe('1\n1\n');
      expect(seen.map(({ method, url, authorization }) => ({ method, url, authorization }))).toEqual([
        { method: 'GET', url: '/clickhouse/?query=SELECT+1', authorization: basic },
        { method: 'POST', url: '/clickhouse/', authorization: basic },
      ]);
      expect(seen[1]?.body).toBe(
        'SELECT event_name, count() AS events FROM events GROUP BY event_name ORDER BY events DESC FORMAT CSVWithNames\n',
      );
    }
  });

  it('gives GUI tools the host, the port (443 or 80 when the origin has none), TLS and the /clickhouse path', () => {
    expect(serverOf('https://analytics.example.com')).toEqual({ host: 'analytics.example.com', port: '443', secure: true });
    expect(serverOf('http://analytics.example.com')).toEqual({ host: 'analytics.example.com', port: '80', secure: false });
    expect(serverOf('https://127.0.0.1:8443')).toEqual({ host: '127.0.0.1', port: '8443', secure: true });
    const grafana = snippet('grafana', { origin: 'https://analytics.example.com', password: PASSWORD });
    expect(grafana.text).toBe(
      [
        'Server address: analytics.example.com',
        'Server port: 443',
        'Secure connection: On',
        'Protocol: HTTP',
        'HTTP URL path: /clickhouse',
        `Username: ${USERNAME}`,
        `Password: ${PASSWORD}`,
      ].join('\n'),
    );
    for (const id of ['metabase', 'dbeaver']) {
      const text = snippet(id, { origin: 'https://analytics.example.com', password: null }).text;
      expect(text).toContain('Path: /clickhouse');
      expect(text).toContain(`Username: ${USERNAME}`);
      expect(text).toContain('Password: the password shown when the credential was created');
    }
  });
});
