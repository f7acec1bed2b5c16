import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { REPO_ROOT } from '../helpers/process.js';
import { useTestServer } from '../helpers/server.js';
import { useBrowser } from '../web/browser.js';
import { switchableProxy } from './switchable-proxy.js';

/*
 * The built browser SDK (sdk/dist/browser.min.js) in Chromium, on a page of another origin (a
 * second local port) than the service (issue 22, "Proof"): it tracks and votes across origins
 * (CORS), keeps its events in localStorage through a lost network and a reload and delivers
 * them once when the network is back, sends what is queued when the page is hidden, and bounds
 * its queue by what localStorage holds (issue 28), reporting what did not fit.
 */

const PAGE = `<!doctype html><meta charset="utf-8"><title>app</title>
<script type="module">
  import * as sdk from '/sdk.js';
  const config = Object.fromEntries(new URLSearchParams(location.search));
  window.sdk = sdk;
  window.errors = [];
  window.client = sdk.init({
    onError: (error) => window.errors.push({ name: error.name, code: error.code, count: error.count }),
    host: config.host,
    apiKey: config.key,
    flushAt: Number(config.flushAt ?? 20),
    flushIntervalMs: Number(config.flushIntervalMs ?? 10000),
    retryBaseMs: 100,
    retryMaxMs: 500,
  });
  window.sdkReady = window.client.ready;
</script>`;

type Row = { id: string; user_id: string };

const server = useTestServer();
let app: Server;
let appUrl: string;
const browser = useBrowser();
let project: TestProject;

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
  const bundle = await readFile(path.join(REPO_ROOT, 'sdk/dist/browser.min.js'));
  // The app's own origin: its page and the SDK file, nothing else.
  app = createServer((request, response) => {
    if (request.url?.startsWith('/sdk.js')) response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else if (request.url === '/' || request.url?.startsWith('/?')) response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  stopWhenDone(async () => {
    await new Promise((resolve) => app?.close(resolve));
  });
});

function pageUrl(options: Record<string, string> = {}): string {
  return `${appUrl}/?${new URLSearchParams({ host: server.url, key: project.apiKey, ...options })}`;
}

async function openApp(options: Record<string, string> = {}): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(pageUrl(options));
  await page.waitForFunction('window.sdkReady !== undefined');
  await page.evaluate('window.sdkReady');
  return { page, problems };
}

async function storedEvents(ids: string[]): Promise<Row[]> {
  await server.eventsVisible();
  return server.clickhouseRows<Row>(
    'SELECT toString(event_id) AS id, user_id FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}',
    { p: project.id, ids },
  );
}

describe('the browser SDK on another origin', () => {
  it('tracks (a gzipped batch) and votes across origins', async () => {
    const feedback = await createFeedback(server, project);
    const { page, problems } = await openApp({ flushAt: '1000' });
    expect(page.url().startsWith(appUrl) && !server.url.startsWith(appUrl)).toBe(true);
    const requests: { url: string; encoding: string | undefined }[] = [];
    page.on('request', (request) => requests.push({ url: request.url(), encoding: request.headers()['content-encoding'] }));
    const result = (await page.evaluate(`(async () => {
      await client.identify('browser-user', { mrr: 12 });
      const ids = [];
      for (let i = 0; i < 30; i++) ids.push(client.track('browser_event', { i, text: 'some words that compress well' }));
      await client.flush();
      const vote = await client.vote(${JSON.stringify(feedback.id)});
      const item = await client.getFeedback(${JSON.stringify(feedback.id)});
      let conflict;
      try { await client.vote(${JSON.stringify(feedback.id)}); } catch (error) { conflict = { name: error.name, status: error.status, reason: error.reason }; }
      return { ids, vote, hasVoted: item.has_voted, conflict, stats: client.stats() };
    })()`)) as { ids: string[]; vote: { has_voted: boolean; vote_count: number }; hasVoted: boolean; conflict: unknown; stats: unknown };
    expect(result.vote).toMatchObject({ has_voted: true, vote_count: 2 });
    expect(result.hasVoted).toBe(true);
    expect(result.conflict).toMatchObject({ name: 'FeedbackApiError', status: 409 });
    expect(result.stats).toMatchObject({ delivered: 30, queued: 0 });
    const batch = requests.find((request) => request.url.endsWith('/api/v1/events/batch'));
    expect(batch?.encoding, 'the batch went gzipped (CompressionStream)').toBe('gzip');
    const rows = await storedEvents(result.ids);
    expect(rows).toHaveLength(30);
    expect(new Set(rows.map((row) => row.user_id))).toEqual(new Set(['browser-user']));
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('loses the network, reloads, gets it back: the events kept in localStorage are delivered once', async () => {
    // The network to the service is cut for real (connections refused), keepalive requests included.
    const proxy = await switchableProxy(Number(new URL(server.url).port));
    const { page } = await openApp({ flushAt: '5', host: proxy.url });
    await proxy.down();
    const ids = (await page.evaluate(`(async () => {
      const ids = [];
      for (let i = 0; i < 12; i++) ids.push(client.track('offline_event', { i }, { userId: 'offline-user' }));
      // Fixed on purpose: flushes are tried and fail meanwhile, where a wrong SDK would lose the events.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return ids;
    })()`)) as string[];
    await page.reload(); // pagehide tries a keepalive send: refused too
    await page.waitForFunction('window.sdkReady !== undefined');
    await page.evaluate('window.sdkReady');
    const kept = (await page.evaluate(`JSON.parse(localStorage.getItem('feedback_queue')).events.map((e) => e.eventId)`)) as string[];
    expect(kept).toEqual(ids);
    expect(await storedEvents(ids)).toHaveLength(0);

    await proxy.up();
    await page.evaluate(`window.dispatchEvent(new Event('online'))`);
    await eventually('the restored queue delivered', 15_000, async () => (await page.evaluate('client.stats().queued')) === 0);
    const rows = await storedEvents(ids);
    expect(rows.map((row) => row.id).sort()).toEqual([...ids].sort());
    expect(await page.evaluate(`JSON.parse(localStorage.getItem('feedback_queue')).events.length`)).toBe(0);
    await page.context().close();
    await proxy.close();
  });

  it('sends what is queued when the page is hidden (pagehide, keepalive)', async () => {
    const { page } = await openApp({ flushAt: '1000', flushIntervalMs: '600000' });
    const ids = (await page.evaluate(`[1, 2, 3].map((i) => client.track('hidden_event', { i }, { userId: 'leaving-user' }))`)) as string[];
    // Fixed on purpose: time in which a wrong SDK would send before the page is hidden.
    await page.waitForTimeout(200);
    expect(await storedEvents(ids)).toHaveLength(0);
    await page.goto('about:blank'); // pagehide on the app's page
    await eventually('the events sent on pagehide stored', 15_000, async () => (await storedEvents(ids)).length === 3);
    await page.context().close();
  });

  it('localStorage full: the queue keeps the newest events that fit, drops the oldest as STORAGE_FULL and reports them', async () => {
    const proxy = await switchableProxy(Number(new URL(server.url).port));
    const { page, problems } = await openApp({ flushAt: '1000000', host: proxy.url });
    await proxy.down();
    const result = (await page.evaluate(`(() => {
      // The page's own data fills localStorage but for ~40,000 characters.
      let low = 0, high = 20000000;
      while (high - low > 1000) {
        const middle = Math.floor((low + high) / 2);
        try { localStorage.setItem('app_data', 'x'.repeat(middle)); low = middle; } catch { high = middle; }
      }
      localStorage.setItem('app_data', 'x'.repeat(low - 40000));
      const ids = [];
      for (let i = 0; i < 1000; i++) ids.push(client.track('quota_event', { i, text: 'some text to take room' }, { userId: 'quota-user' }));
      // The trim and its report come a turn or two later: wait until every event is queued or
      // dropped, the drop reported, and what is stored is the queue.
      const storedIds = () => JSON.parse(localStorage.getItem('feedback_queue')).events.map((e) => e.eventId);
      const settled = () => {
        const s = client.stats();
        return s.queued + s.dropped === 1000 && window.errors.some((e) => e.code === 'STORAGE_FULL') && storedIds().length === s.queued;
      };
      const started = Date.now();
      return new Promise((resolve, reject) => {
        const poll = () => {
          if (settled()) resolve({ ids, stats: client.stats(), errors: window.errors, stored: storedIds() });
          else if (Date.now() - started > 15000) reject(new Error('the queue never settled: ' + JSON.stringify(client.stats())));
          else setTimeout(poll, 20);
        };
        poll();
      });
    })()`)) as {
      ids: string[];
      stats: { queued: number; dropped: number; droppedBy: Record<string, number> };
      errors: unknown[];
      stored: string[];
    };
    const { ids, stats, stored } = result;
    expect(stats.queued, 'some fit, not all').toBeGreaterThan(50);
    expect(stats.queued).toBeLessThan(1000);
    expect(stats.droppedBy.STORAGE_FULL).toBe(1000 - stats.queued);
    expect(stats.dropped).toBe(1000 - stats.queued);
    expect(result.errors).toContainEqual({ name: 'FeedbackDropError', code: 'STORAGE_FULL', count: 1000 - stats.queued });
    expect(stored, 'what a reload would find is exactly the queue: the newest events').toEqual(ids.slice(1000 - stats.queued));

    await proxy.up();
    await page.evaluate(`window.dispatchEvent(new Event('online'))`);
    await eventually('the queue that fit delivered', 15_000, async () => (await page.evaluate('client.stats().queued')) === 0);
    const rows = await storedEvents(ids);
    expect(rows.map((row) => row.id).sort()).toEqual([...stored].sort());
    expect(problems).toEqual([]);
    await page.context().close();
    await proxy.close();
  });
});
