import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { batchInsertSettings } from '../../src/olap/tables/insert-settings.js';
import { chTime } from '../../src/olap/time.js';
import { chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';
import { BROWSER_TEST_TIMEOUTS, useBrowser } from './browser.js';

vi.setConfig({ ...BROWSER_TEST_TIMEOUTS, testTimeout: 240_000 });

/*
 * DbGate (docs/clickhouse-interface.md, "Connect DbGate"), driven in Chromium against the interface:
 * the connection opens with the URL form for URL-only tools, the four tables are listed, the events
 * grid opens with the own project's rows only, DbGate's own CSV export of the table downloads every
 * row the credential reads (and nothing else), and the filter of its event_name column narrows the
 * grid. DbGate is `dbgate-serve` 7.2.2 with
 * `dbgate-plugin-clickhouse` from DBGATE_DIR (a directory whose node_modules holds them, installed
 * as docs/clickhouse-interface.md "Connect DbGate" shows, with the `overrides` entry for `http`);
 * without it the test is skipped, and test/api/clickhouse-catalogue.test.ts replays DbGate's
 * catalogue queries instead.
 */

const DBGATE_DIR = process.env.DBGATE_DIR ?? path.resolve('.');
const BIN = path.join(DBGATE_DIR, 'node_modules', 'dbgate-serve', 'bin', 'dbgate-serve.js');
const installed = existsSync(BIN);

/** The index of a column among the grid's filter inputs: the grid's headers, left to right, before it. */
async function columnIndex(page: import('playwright-core').Page, column: string): Promise<number> {
  const headers = ['project_id', 'created_at', 'event_id', 'event_name', 'user_id'];
  // The left panel's multi-column filter comes first in the page.
  return headers.indexOf(column) + 1 - ((await page.getByText('Multi column filter').count()) === 0 ? 1 : 0);
}

describe.skipIf(!installed)('DbGate against the ClickHouse interface', () => {
  const server = useTestServer({ workers: false });
  const browser = useBrowser();
  let own: TestProject;
  let cred: TestClickhouseCredential;
  let dbgate: string;

  beforeAll(async () => {
    own = await createProject(server, { plan: 'pro' });
    await seedAnalytics(server, own.id, 'own');
    await seedAnalytics(server, (await createProject(server, { plan: 'pro' })).id, 'FOREIGN');
    // Values CSV must quote (a comma, a double quote, a line break), for the export to carry as they are.
    const now = chTime(new Date(Date.now() - 60_000));
    const awkward = { note: 'a, "quoted"\nline', n: 3 };
    await server.clickhouse.insert({
      table: 'events',
      values: [1, 2].map((i) => ({
        project_id: own.id,
        created_at: now,
        event_id: randomUUID(),
        event_name: 'own_custom',
        user_id: `own-user-${i + 2}, "with quotes"`,
        properties: awkward,
        properties_raw: JSON.stringify(awkward),
        received_at: now,
      })),
      format: 'JSONEachRow',
      clickhouse_settings: batchInsertSettings(randomUUID()),
    });
    cred = await createClickhouseCredential(server, own);
    const port = await findFreePort();
    const home = await mkdtemp(path.join(tmpdir(), 'dbgate-home-'));
    const child: ChildProcess = spawn(process.execPath, [BIN], {
      cwd: home,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        PORT: String(port),
        CONNECTIONS: 'ch',
        LABEL_ch: 'Feedback analytics',
        ENGINE_ch: 'clickhouse@dbgate-plugin-clickhouse',
        // The URL form for tools that take only a URL: @clickhouse/client reads a path as the database.
        URL_ch: `${server.url}/?pathname=/clickhouse`,
        USER_ch: cred.username,
        PASSWORD_ch: cred.password,
        DATABASE_ch: 'default',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += String(chunk)));
    child.stderr?.on('data', (chunk) => (output += String(chunk)));
    stopWhenDone(async () => {
      child.kill('SIGTERM');
      await rm(home, { recursive: true, force: true });
    });
    dbgate = `http://127.0.0.1:${port}`;
    await eventually(`DbGate listens (${output.slice(-300)})`, 120_000, async () => {
      try {
        return (await fetch(dbgate)).status === 200;
      } catch {
        return false;
      }
    });
  });

  it('lists the tables, opens the events grid, exports it as CSV and filters it on event_name', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(dbgate);
    const shot = (name: string) => page.screenshot({ path: path.join(tmpdir(), `dbgate-${name}.png`) });
    /** A table of DbGate's tree: its icon, its name, its engine. */
    const tableItem = (table: string) =>
      page.locator('div.main:has(.mdi-table)').filter({ hasText: new RegExp(`^\\s*${table}\\s+\\w*MergeTree\\s*$`) });
    // The connection from the environment, then its one database, then the tables.
    await page.getByText('Feedback analytics').first().click({ timeout: 60_000 });
    await expect.poll(() => page.getByText('Tables (4)').count(), { timeout: 60_000 }).toBe(1);
    // Each table is listed with its engine beside its name ("events MergeTree").
    for (const table of ['events', 'events_daily', 'events_hourly', 'facts']) {
      await expect.poll(() => tableItem(table).count(), { timeout: 30_000 }).toBe(1);
    }
    await shot('tables');
    await tableItem('events').click();
    await shot('after-click');
    await expect.poll(() => page.getByText('own-user-2').count(), { timeout: 60_000 }).toBeGreaterThan(0);
    expect(await page.getByText('FOREIGN', { exact: false }).count()).toBe(0);
    await shot('grid');
    // The grid's Export menu, "CSV file": DbGate runs the export in its own process (its reader of the
    // ClickHouse connection, the CSV plugin's writer) and the page downloads the file when it is done.
    await page.getByText('Export', { exact: true }).first().click();
    const download = page.waitForEvent('download', { timeout: 120_000 });
    await page.getByText('CSV file', { exact: true }).first().click();
    const csv = await readFile(await (await download).path(), 'utf8');
    await shot('exported');
    expect(csv.split('\n')[0]).toBe('project_id,created_at,event_id,event_name,user_id,properties,properties_raw,received_at');
    expect(csv).not.toContain('FOREIGN');
    // Read back by the engine as the events table's columns, then compared with the table's rows as the credential reads them.
    const columns = await server.clickhouseRows<{ name: string; type: string }>(
      "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'events' ORDER BY position",
    );
    const structure = columns.map((column) => `${column.name} ${column.type}`).join(', ');
    const row = (from: string) =>
      `SELECT toString(project_id) AS project, toString(created_at) AS created, toString(event_id) AS id, event_name, user_id, ` +
      `toJSONString(properties) AS properties, properties_raw, toString(received_at) AS received FROM ${from} ORDER BY id`;
    const exported = await server.clickhouseRows(row(`format(CSVWithNames, '${structure.replace(/'/g, "\\'")}', {csv:String})`), { csv });
    const table = await chRequest(`${server.url}/clickhouse`, { query: row('events'), default_format: 'JSONEachRow' }, { auth: cred });
    expect(table.status, table.text).toBe(200);
    const rows = table.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(rows).toHaveLength(5); // the 3 seeded in the plan's window and the 2 above; none of the other project's
    expect(exported).toEqual(rows);
    // The filter of the event_name column, in the grid's filter row below its header (DbGate adds it to its own
    // query). Not the multi-column filter: it applies position() to the UUID columns too, which a server refuses (43) as well.
    const filter = page
      .locator('input[placeholder="Filter"]')
      .filter({ visible: true })
      .nth(await columnIndex(page, 'event_name'));
    await filter.fill('submit_feedback');
    await filter.press('Enter');
    await expect.poll(() => page.getByText('own-user-1').count(), { timeout: 30_000 }).toBe(0);
    await expect.poll(() => page.getByText('own-user-2').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await shot('filtered');
  });
});
