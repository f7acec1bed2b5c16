import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { inspect, promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { connectionSnippets, serverOf, type ToolSnippet } from '../../web/src/lib/connection-snippets.js';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

/*
 * The snippets of the dashboard's "Connect a tool" panel (web/src/lib/connection-snippets.ts), run
 * as printed against the real ClickHouse interface of a started service (its `/clickhouse`): the
 * @clickhouse/client one by Node with the project's installed client, the curl one by bash, each
 * with a credential of a project whose events are seeded so the example query's answer is fixed.
 */
const server = useTestServer({ workers: false });
let cred: TestClickhouseCredential;
let origin: string;
let USERNAME: string;
let PASSWORD: string;

beforeAll(async () => {
  const project = await createProject(server, { plan: 'pro' });
  // feedback_list 3, submit_feedback 2, snippet_custom 1: ORDER BY events DESC has one answer.
  await seedAnalytics(server, project.id, 'snippet');
  await seedAnalytics(server, project.id, 'again', { customEvent: 'feedback_list' });
  cred = await createClickhouseCredential(server, project);
  origin = server.url;
  USERNAME = cred.username;
  PASSWORD = cred.password;
});

const EXPECTED_ROWS = [
  { event_name: 'feedback_list', events: 3 },
  { event_name: 'submit_feedback', events: 2 },
  { event_name: 'snippet_custom', events: 1 },
];

function snippet(id: string, values: { origin: string; password: string | null }): ToolSnippet {
  const found = connectionSnippets({ username: USERNAME, ...values }).find((s) => s.id === id);
  if (!found) throw new Error(`no ${id} snippet`);
  return found;
}

describe('the Connect a tool snippets', () => {
  it('@clickhouse/client, as printed, queries <origin>/clickhouse with the credential and prints the project’s rows', async () => {
    // Inside the repository, so `@clickhouse/client` resolves to the installed package.
    const dir = await mkdtemp(path.join(root, 'node_modules', '.snippet-'));
    try {
      const file = path.join(dir, 'snippet.mjs');
      // What the interface answers the snippet's query, as the client parses it: the snippet must print exactly that.
      const answer = await chRequest(
        `${origin}/clickhouse`,
        { query: 'SELECT event_name, count() AS events FROM events GROUP BY event_name ORDER BY events DESC FORMAT JSONEachRow' },
        { auth: cred },
      );
      const rows = answer.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { event_name: string; events: string | number });
      expect(rows.map((row) => ({ event_name: row.event_name, events: Number(row.events) }))).toEqual(EXPECTED_ROWS);
      await writeFile(file, snippet('node', { origin, password: PASSWORD }).text);
      const { stdout } = await run(process.execPath, [file], { cwd: root, timeout: 20_000 });
      expect(stdout).toBe(`${inspect(rows)}\n`);

      // Without the password on screen, it reads CLICKHOUSE_PASSWORD; without it, the interface refuses.
      await writeFile(file, snippet('node', { origin, password: null }).text);
      const fromEnv = await run(process.execPath, [file], {
        cwd: root,
        timeout: 20_000,
        env: { ...process.env, CLICKHOUSE_PASSWORD: PASSWORD },
      });
      expect(fromEnv.stdout).toBe(`${inspect(rows)}\n`);
      const { CLICKHOUSE_PASSWORD: _unset, ...without } = process.env;
      await expect(run(process.execPath, [file], { cwd: root, timeout: 20_000, env: without })).rejects.toMatchObject({
        stderr: expect.stringMatching(/Authentication failed/),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('curl, as printed, sends both queries to <origin>/clickhouse/ with the credential', async () => {
    const csv = ['"event_name","events"', ...EXPECTED_ROWS.map((row) => `"${row.event_name}",${row.events}`)].join('\n');
    for (const [password, env] of [
      [PASSWORD, {}],
      [null, { CLICKHOUSE_PASSWORD: PASSWORD }],
    ] as const) {
      const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', snippet('curl', { origin, password }).text], {
        timeout: 20_000,
        env: { ...process.env, ...env },
      });
      expect(stdout).toBe(`1\n${csv}\n`);
    }
    // The same request without the credential is refused by the interface, so the answers above were its own.
    expect((await chRequest(`${origin}/clickhouse`, { query: 'SELECT 1' })).status).toBe(403);
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
