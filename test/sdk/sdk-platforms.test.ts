import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { appStateLifecycle, FeedbackClient, type StorageAdapter } from '../../sdk/dist/react-native.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { REPO_ROOT } from '../helpers/process.js';
import { useTestServer } from '../helpers/server.js';
import { switchableProxy } from './switchable-proxy.js';

/*
 * The built package's entry points as apps load them, and the React Native adapters against the
 * real service: an AsyncStorage-shaped store (promises) keeps the queue across an app restart,
 * and an AppState change away from `active` sends what is queued.
 */

const server = useTestServer();
let project: TestProject;

beforeAll(async () => {
  project = await createProject(server);
});

it('every entry point loads as ESM and as CommonJS with the same API, and declares its types', async () => {
  const require = createRequire(import.meta.url);
  const dist = path.join(REPO_ROOT, 'sdk/dist');
  const api = ['init', 'identify', 'track', 'flush', 'shutdown', 'listFeedback', 'createFeedback', 'getFeedback', 'vote', 'unvote'];
  for (const entry of ['index', 'node', 'react-native']) {
    const esm = (await import(path.join(dist, `${entry}.js`))) as Record<string, unknown>;
    const cjs = require(path.join(dist, `${entry}.cjs`)) as Record<string, unknown>;
    for (const name of [
      ...api,
      'listComments',
      'addComment',
      'FeedbackClient',
      'FeedbackApiError',
      'FeedbackNetworkError',
      'FeedbackDropError',
    ]) {
      expect(typeof esm[name], `${entry}.js ${name}`).toBe('function');
      expect(typeof cjs[name], `${entry}.cjs ${name}`).toBe('function');
    }
    expect(existsSync(path.join(dist, `${entry}.d.ts`)), `${entry}.d.ts`).toBe(true);
  }
  const pkg = require(path.join(REPO_ROOT, 'sdk/package.json')) as { dependencies?: object; peerDependencies?: object };
  expect(pkg.dependencies ?? {}, 'no runtime dependencies').toEqual({});
  expect(pkg.peerDependencies ?? {}).toEqual({});
});

/** React Native's AsyncStorage, as far as the SDK sees it: every call a promise. */
function asyncStorage(): StorageAdapter & { data: Map<string, string> } {
  const data = new Map<string, string>();
  // Answers a moment later, as a real asynchronous store does (part of the simulated platform).
  const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 1));
  return {
    data,
    getItem: (key) => later(data.get(key) ?? null),
    setItem: (key, value) => later(void data.set(key, value)),
    removeItem: (key) => later(void data.delete(key)),
  };
}

/** React Native's AppState, as far as the SDK sees it. */
function appState() {
  const listeners = new Set<(state: string) => void>();
  return {
    addEventListener(_type: 'change', listener: (state: string) => void) {
      listeners.add(listener);
      return { remove: () => listeners.delete(listener) };
    },
    change(state: string) {
      for (const listener of listeners) listener(state);
    },
    get listeners() {
      return listeners.size;
    },
  };
}

it('React Native: the queue survives an app restart in AsyncStorage, and going to the background sends it', async () => {
  const storage = asyncStorage();
  const proxy = await switchableProxy(Number(new URL(server.url).port));
  await proxy.down();
  const options = {
    host: proxy.url,
    apiKey: project.apiKey,
    storage,
    flushAt: 1000,
    flushIntervalMs: 600_000,
    retryBaseMs: 50,
    retryMaxMs: 100,
  };

  // First run: tracked while the service cannot be reached, then the app is killed.
  const first = new FeedbackClient(options);
  await first.ready;
  const ids = [0, 1, 2].map((i) => first.track('rn_event', { i }, { userId: 'rn-user' }));
  await eventually('the queue written to AsyncStorage', 5_000, async () =>
    (storage.data.get('feedback_queue') ?? '').includes(ids[2] as string),
  );
  await first.shutdown(0);

  // Second run: restored from storage; nothing is sent until the app goes to the background.
  await proxy.up();
  const state = appState();
  const second = new FeedbackClient({ ...options, lifecycle: appStateLifecycle(state) });
  await second.ready;
  expect(second.stats().queued).toBe(3);
  const more = second.track('rn_event', { i: 3 }, { userId: 'rn-user' });
  state.change('background');
  await eventually('sent on going to the background', 10_000, async () => second.stats().queued === 0);
  expect(second.stats()).toMatchObject({ delivered: 4 });
  await server.eventsVisible();
  const rows = await server.clickhouseRows<{ id: string }>(
    'SELECT toString(event_id) AS id FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}',
    { p: project.id, ids: [...ids, more] },
  );
  expect(rows.map((row) => row.id).sort()).toEqual([...ids, more].sort());
  await second.shutdown();
  expect(state.listeners, 'shutdown unsubscribes from AppState').toBe(0);
  await proxy.close();
});
