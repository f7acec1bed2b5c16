import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it, vi } from 'vitest';
import { FeedbackApiError, FeedbackDropError } from '../../sdk/dist/node.js';
import { findFreePort } from '../../src/core/net.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { REPO_ROOT } from '../helpers/process.js';
import { useTestServer } from '../helpers/server.js';
import { sdkClient } from './sdk-client.js';

/*
 * The SDK loses no event, and says so if it ever does (issue 28, part 1). With its default
 * options a Node service that tracks 100,000 events in one synchronous loop gets every one stored
 * exactly once (the queue was capped at 1,000 events and dropped 99,000 of them silently); any
 * drop reaches onError as a FeedbackDropError, counts in stats() and is warned about once; and a
 * Node script that tracks and simply ends, the README's three lines, still delivers.
 */

const EVENTS = 100_000;

const server = useTestServer();
let project: TestProject;
/** A folder where `@feedback/sdk` resolves to sdk/, as `npm install <repo>/sdk` links it. */
let appDir: string;

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
  appDir = await mkdtemp(path.join(tmpdir(), 'feedback-sdk-app-'));
  await mkdir(path.join(appDir, 'node_modules', '@feedback'), { recursive: true });
  await symlink(path.join(REPO_ROOT, 'sdk'), path.join(appDir, 'node_modules', '@feedback', 'sdk'));
  await writeFile(path.join(appDir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  stopWhenDone(async () => {
    if (appDir) await rm(appDir, { recursive: true, force: true });
  });
});

async function storedCount(eventName: string): Promise<number> {
  await server.eventsVisible(120_000);
  const [row] = await server.clickhouseRows<{ n: number }>(
    'SELECT count() AS n FROM events WHERE project_id = {p:UUID} AND event_name = {name:String}',
    { p: project.id, name: eventName },
  );
  return Number(row?.n);
}

it('100,000 track() calls in one synchronous loop, default options: all stored, each exactly once', async () => {
  const client = sdkClient(server.url, project.apiKey);
  for (let i = 0; i < EVENTS; i++) client.track('sdk_burst', { i }, { userId: `burst-${i % 100}` });
  expect(client.stats()).toMatchObject({ queued: EVENTS, dropped: 0 });
  await eventually('the SDK delivered the burst', 240_000, async () => client.stats().queued === 0);
  expect(client.stats()).toMatchObject({ delivered: EVENTS, dropped: 0, duplicates: 0, rejected: 0, discarded: 0 });
  await client.shutdown();
  await server.eventsVisible(120_000);
  const [counts] = await server.clickhouseRows<{ rows: number; ids: number; numbers: number }>(
    `SELECT count() AS rows, uniqExact(event_id) AS ids, uniqExact(JSONExtractUInt(properties_raw, 'i')) AS numbers
     FROM events WHERE project_id = {p:UUID} AND event_name = 'sdk_burst'`,
    { p: project.id },
  );
  expect(counts).toEqual({ rows: EVENTS, ids: EVENTS, numbers: EVENTS });
}, 300_000);

it('past maxQueueBytes the oldest are dropped: onError gets a FeedbackDropError, stats() counts them, console.warn once', async () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    const errors: unknown[] = [];
    // Nothing can be sent (a closed port): the queue only grows.
    const client = sdkClient(`http://127.0.0.1:${await findFreePort()}`, project.apiKey, {
      maxQueueBytes: 20_000,
      flushAt: 1_000_000,
      onError: (error) => errors.push(error),
    });
    const ids = Array.from({ length: 500 }, (_, i) => client.track('sdk_full', { i }, { userId: 'full' }));
    await Promise.resolve(); // drops are reported once per turn of the event loop
    const stats = client.stats();
    expect(stats.queued).toBeGreaterThan(50);
    expect(stats.queued).toBeLessThan(500);
    expect(stats.dropped).toBe(500 - stats.queued);
    expect(stats.droppedBy).toMatchObject({ QUEUE_FULL: stats.dropped, REFUSED: 0 });
    expect(errors).toHaveLength(1);
    const drop = errors[0] as FeedbackDropError;
    expect(drop).toBeInstanceOf(FeedbackDropError);
    expect(drop).toMatchObject({ name: 'FeedbackDropError', code: 'QUEUE_FULL', count: stats.dropped });
    expect(drop.eventIds, 'the oldest went').toEqual(ids.slice(0, stats.dropped));
    // Later drops: reported and counted again, warned about no more.
    for (let i = 0; i < 100; i++) client.track('sdk_full', { i }, { userId: 'full' });
    await Promise.resolve();
    expect(errors).toHaveLength(2);
    expect(client.stats().dropped).toBe(600 - client.stats().queued);
    const warnings = warn.mock.calls.filter(([message]) => String(message).startsWith('[feedback]'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.[0])).toMatch(/QUEUE_FULL/);
    // shutdown() with no way to deliver and nothing to keep them in: reported, not silently gone.
    const queued = client.stats().queued;
    await client.shutdown(100);
    await Promise.resolve();
    expect(errors.at(-1)).toMatchObject({ code: 'SHUTDOWN_TIMEOUT', count: queued });
    client.track('sdk_full', {}, { userId: 'full' });
    await Promise.resolve();
    expect(errors.at(-1)).toMatchObject({ code: 'CLIENT_CLOSED', count: 1 });
    expect(client.stats()).toMatchObject({ queued: 0, dropped: 601 });
  } finally {
    warn.mockRestore();
  }
});

it('a refusal no retry can fix (a wrong key): the batch reaches onError as a FeedbackDropError, its cause the 401', async () => {
  const errors: unknown[] = [];
  const client = sdkClient(server.url, 'fbk_not_a_key', { flushAt: 1000, onError: (error) => errors.push(error) });
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    const ids = [client.track('sdk_refused', {}, { userId: 'nobody' }), client.track('sdk_refused', {}, { userId: 'nobody' })];
    await client.flush();
    await Promise.resolve();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'REFUSED', count: 2, eventIds: ids });
    expect((errors[0] as FeedbackDropError).cause).toBeInstanceOf(FeedbackApiError);
    expect((errors[0] as FeedbackDropError).cause).toMatchObject({ status: 401 });
    expect(client.stats()).toMatchObject({ queued: 0, dropped: 2, discarded: 2, droppedBy: { REFUSED: 2 } });
    expect(warn).toHaveBeenCalledTimes(1);
  } finally {
    warn.mockRestore();
  }
  await client.shutdown();
});

/** Runs `node <file>` in the app folder; resolves with its exit and output. */
function runNode(file: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [file], { cwd: appDir, timeout: timeoutMs }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started });
    });
  });
}

it('the README’s three-line snippet as a Node script that simply ends: the event is delivered before the process exits', async () => {
  const readme = await readFile(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const snippet = /```ts\n(import \{ init, track \} from '@feedback\/sdk';[\s\S]*?)```/.exec(readme)?.[1];
  expect(snippet, 'the README shows the snippet').toBeDefined();
  expect(snippet?.trim().split('\n')).toHaveLength(3);
  const script = (snippet as string).replace("'fbk_…'", JSON.stringify(project.apiKey)).replace('http://127.0.0.1:3000', server.url);
  expect(script).not.toContain('…');
  await writeFile(path.join(appDir, 'readme-snippet.mjs'), script);
  const run = await runNode('readme-snippet.mjs', 60_000);
  expect(run, run.stderr).toMatchObject({ code: 0, stderr: '' });
  expect(await storedCount('signed_up')).toBe(1);
}, 90_000);

it('a script that ends while the service is down waits exitTimeoutMs at most, then reports what it lost', async () => {
  const script = `
import { init, track } from '@feedback/sdk';
init({
  apiKey: 'fbk_x', host: 'http://127.0.0.1:${await findFreePort()}', exitTimeoutMs: 1500,
  onError: (error) => { if (error.name === 'FeedbackDropError') console.log(JSON.stringify({ code: error.code, count: error.count })); },
});
for (let i = 0; i < 3; i++) track('lost', { i });
`;
  await writeFile(path.join(appDir, 'service-down.mjs'), script);
  const run = await runNode('service-down.mjs', 60_000);
  expect(run.code).toBe(0);
  expect(run.stdout.trim()).toBe(JSON.stringify({ code: 'SHUTDOWN_TIMEOUT', count: 3 }));
  expect(run.stderr).toMatch(/\[feedback\] 3 events dropped: SHUTDOWN_TIMEOUT/);
  expect(run.ms, 'the exit waited about exitTimeoutMs, not for ever').toBeLessThan(20_000);
}, 90_000);
