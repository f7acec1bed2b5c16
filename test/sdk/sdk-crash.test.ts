import { expect, it } from 'vitest';
import { eventually, sleep } from '../helpers/eventually.js';
import { expectExactlyOnce, serviceSetup, startService, stopService, storedCopies } from '../helpers/service.js';
import { sdkClient } from './sdk-client.js';

/*
 * Node (issue 22, "Proof"): an app tracks 100,000 events through the SDK while the embedded
 * service (a real `npm start` process) is SIGKILLed and restarted twice. Requests cut by a kill
 * are retried by the SDK with the same eventIds; afterwards ClickHouse holds every event exactly
 * once, checked by eventId.
 */

/** An account and a project on the spawned service, through the operator and admin APIs. */
async function createProject(base: string, operatorToken: string): Promise<{ id: string; apiKey: string }> {
  const post = async (path: string, token: string, body: unknown) => {
    const response = await fetch(base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, string>;
  };
  const account = await post('/api/v1/admin/accounts', operatorToken, { email: `sdk-${Date.now()}@example.com`, plan: 'pro' });
  const project = await post('/api/v1/projects', account.admin_token as string, { name: 'sdk crash' });
  return { id: project.id as string, apiKey: project.api_key as string };
}

const EVENTS = 100_000;
// The time goes to three service starts and the delivery itself: 228 s at load average 28 on 2
// cores (eight sessions sharing them), hence the generous timeout.
const KILL_AT = [20_000, 50_000];

it('100,000 events tracked while the service is SIGKILLed and restarted twice: each stored exactly once', async () => {
  const t0 = Date.now();
  const lap = (what: string) => console.info(`[SDK SIGKILL] ${what} at ${Date.now() - t0} ms (${JSON.stringify(client?.stats())})`);
  const setup = await serviceSetup();
  setup.env.RATE_LIMIT_INGEST = '1000000/s';
  setup.env.INGEST_LOG_SHUTDOWN_SECONDS = '60'; // the last graceful stop ships the whole log
  let service = await startService(setup);
  const project = await createProject(setup.base, setup.operatorToken);

  // Big batches and short retries for the test's time; the queue holds everything tracked.
  let client: ReturnType<typeof sdkClient> | undefined;
  lap('started');
  const errors: string[] = [];
  client = sdkClient(setup.base, project.apiKey, {
    flushAt: 500,
    flushIntervalMs: 200,
    maxBatchSize: 1000,
    maxQueueSize: EVENTS,
    retryBaseMs: 100,
    retryMaxMs: 1_000,
    onError: (error) => errors.push(String(error)),
  });
  const tracked = new Set<string>();
  const started = Date.now();
  const kills: { at: number; delivered: number; queued: number }[] = [];

  // The service's fate, beside the app: killed when enough is delivered, started again at once.
  const killer = (async () => {
    for (const threshold of KILL_AT) {
      await eventually(`${threshold} events delivered`, 60_000, async () => client.stats().delivered >= threshold);
      lap('kill');
      service.signal('SIGKILL');
      const exit = await service.waitForExit(10_000);
      expect(exit.signal).toBe('SIGKILL');
      kills.push({ at: Date.now() - started, delivered: client.stats().delivered, queued: client.stats().queued });
      service = await startService(setup);
      lap('restarted');
    }
  })();

  // The app: about 8,000 events a second, from 50 users.
  for (let i = 0; i < EVENTS; i++) {
    tracked.add(client.track('sdk_crash', { i }, { userId: `user-${i % 50}` }));
    if (i % 400 === 399) await sleep(50); // pacing: about 8,000 events a second
  }
  lap('all tracked');
  await killer;
  await eventually('the SDK delivered everything', 180_000, async () => client.stats().queued === 0);
  const stats = client.stats();
  await client.shutdown();
  lap('delivered');
  await stopService(service);
  lap('stopped');

  expect(stats).toMatchObject({ queued: 0, dropped: 0, rejected: 0, discarded: 0 });
  expect(stats.delivered + stats.duplicates).toBe(EVENTS);
  expect(kills).toHaveLength(2);
  const copies = await storedCopies(setup.dataDir, project.id);
  expectExactlyOnce(copies, tracked);
  console.info(
    `[SDK SIGKILL] ${EVENTS} events; kills at ${kills.map((k) => `${k.delivered} delivered (${k.queued} queued, ${k.at} ms)`).join(' and ')}; ` +
      `${stats.duplicates} answered duplicate after a cut request; ${errors.length} failed attempts retried; ${copies.size} rows, each once; ` +
      `${Date.now() - started} ms`,
  );
}, 420_000);
