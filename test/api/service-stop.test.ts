import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { eventually } from '../helpers/eventually.js';
import { PROCESS_TEST_TIMEOUT_MS, spawnScript } from '../helpers/process.js';
import { call, expectExactlyOnce, serviceSetup, startService, stopService, storedCopies } from '../helpers/service.js';

/*
 * How a real `npm start` process ends (issue 37): a SIGTERM ends it within SHUTDOWN_TIMEOUT_MS
 * whatever runs, and a process killed on its own (SIGKILL of the Node process, not of its group:
 * the embedded PostgreSQL it started lives on) leaves nothing that stops the next start on the
 * same DATA_DIR, and no acknowledged event is lost.
 */

/** Hashes ten billion numbers: runs for minutes on one thread unless stopped. */
const HEAVY = 'SELECT count() AS n FROM numbers(10000000000) WHERE cityHash64(number) % 1000 = 7';

async function projectWithCredential(base: string, operatorToken: string) {
  const account = await call(base, 'POST', '/api/v1/admin/accounts', {
    bearer: operatorToken,
    body: { email: `stop-${randomUUID()}@example.com`, plan: 'pro' },
  });
  expect(account.status, JSON.stringify(account.body)).toBe(200);
  const project = await call(base, 'POST', '/api/v1/projects', { bearer: account.body.admin_token, body: { name: 'stop' } });
  const credential = await call(base, 'POST', `/api/v1/projects/${project.body.id}/clickhouse-credentials`, {
    bearer: account.body.admin_token,
  });
  expect(credential.status, JSON.stringify(credential.body)).toBe(201);
  return {
    id: project.body.id as string,
    apiKey: project.body.api_key as string,
    auth: `Basic ${Buffer.from(`${credential.body.username}:${credential.body.password}`).toString('base64')}`,
  };
}

describe('stopping', () => {
  it(
    'SIGTERM while an interface query runs for minutes: the process has exited within SHUTDOWN_TIMEOUT_MS',
    async () => {
      const setup = await serviceSetup();
      const DEADLINE_MS = 5_000;
      setup.env.SHUTDOWN_TIMEOUT_MS = String(DEADLINE_MS);
      // The query's own limit is far beyond the deadline: only the stop can end it.
      setup.env.CLICKHOUSE_INTERFACE_TIMEOUT_MS = '600000';
      const service = await startService(setup);
      const project = await projectWithCredential(setup.base, setup.operatorToken);
      const long = fetch(`${setup.base}/clickhouse/?${new URLSearchParams({ query: HEAVY })}`, {
        headers: { authorization: project.auth },
      }).then(
        (r) => r.status,
        () => 'cut',
      );
      // The query has begun: the interface holds its answer until the engine writes.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(await Promise.race([long, 'running'])).toBe('running');

      const signalled = performance.now();
      service.signal('SIGTERM');
      const exit = await service.waitForExit();
      const tookMs = performance.now() - signalled;
      // The old stop cut connections after a fixed 10 s and then waited for the engine.
      expect(tookMs, service.describe().slice(-3_000)).toBeLessThan(DEADLINE_MS + 3_000);
      expect(exit.code === 0 || exit.signal === 'SIGKILL', JSON.stringify(exit)).toBe(true);
      await long;
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'SIGKILL of the Node process alone, the embedded PostgreSQL left running: the next start on the same DATA_DIR is healthy within 60 s, and every acknowledged event is stored',
    async () => {
      const setup = await serviceSetup();
      delete setup.env.DATABASE_URL; // the embedded PostgreSQL under DATA_DIR
      const first = await startService(setup);
      const project = await projectWithCredential(setup.base, setup.operatorToken);
      const acknowledged = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const eventId = randomUUID();
        const r = await call(setup.base, 'POST', '/api/v1/events/track', {
          apiKey: project.apiKey,
          body: { eventName: 'before_kill', userId: `u${i}`, eventId },
        });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        acknowledged.add(eventId);
      }
      const postmaster = Number((await readFile(path.join(setup.dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      first.signal('SIGKILL'); // the process only: its group, the PostgreSQL it started, lives on
      expect((await first.waitForExit()).signal).toBe('SIGKILL');
      expect(() => process.kill(postmaster, 0), 'the embedded PostgreSQL outlived its service').not.toThrow();

      const restarted = performance.now();
      const second = await startService(setup);
      await eventually('healthy', 60_000, async () => (await fetch(`${setup.base}/healthz`)).status === 200);
      const tookMs = performance.now() - restarted;
      expect(tookMs, second.describe().slice(-3_000)).toBeLessThan(60_000);
      expect(second.stderr).toMatch(/stopping the embedded PostgreSQL of an earlier run/);
      // The old server was stopped, not left beside the new one.
      await eventually('the orphan stopped', 10_000, async () => {
        try {
          process.kill(postmaster, 0);
          return false;
        } catch {
          return true;
        }
      });
      await stopService(second);
      expectExactlyOnce(await storedCopies(setup.dataDir, project.id), acknowledged);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'a second service on the DATA_DIR of a running one stops at start-up and says why, never “undefined”',
    async () => {
      const setup = await serviceSetup();
      delete setup.env.DATABASE_URL;
      await startService(setup);
      const second = spawnScript('src/main.ts', { ...setup.env, PORT: String(await findFreePort()) });
      const exit = await second.waitForExit();
      expect(exit.code, second.describe().slice(-3_000)).toBe(1);
      expect(second.stderr).toMatch(
        /start-up failed: .*DATA_DIR .* is in use: its embedded PostgreSQL \(pid \d+\) belongs to the running service process \d+/,
      );
      expect(second.stderr).not.toMatch(/start-up failed: undefined/);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
