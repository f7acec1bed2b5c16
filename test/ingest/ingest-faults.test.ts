import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { sleep } from '../helpers/eventually.js';
import { createProject, createProjectOver, type TestProject } from '../helpers/factories.js';
import { createFaultyClickHouse, type FaultSwitch } from '../helpers/faulty-clickhouse.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { makeDataDir } from '../helpers/process.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { TEST_REDIS_URL, useTestServer } from '../helpers/server.js';
import {
  call,
  type EventBody,
  events,
  expectExactlyOnce,
  inLanes,
  openQueue,
  PENDING_STATES,
  type Reply,
  serviceSetup,
  startService,
  stopService,
  storedCopies,
  storedDump,
} from '../helpers/service.js';

/*
 * Fault tests of event ingestion in BullMQ mode (issue 4, "Proof"): real service processes,
 * real Redis, real chDB, real PostgreSQL. What must hold in every case: an event the API
 * acknowledged (200) is stored exactly once, an event it refused (503) is not stored.
 *
 * chDB binds one data directory to one process. The service processes own theirs, so their
 * ClickHouse is read, once they are stopped, by a short child process (helpers/clickhouse-dump.ts);
 * only the ClickHouse-fault case opens chDB in this test process (through startTestServer).
 */

const withRedis = await redisAvailable();

/** A redis-server of the test's own, with an fsync-always AOF so a SIGKILL loses nothing written. */
class OwnRedis {
  child: ChildProcess | undefined;
  exited: Promise<void> = Promise.resolve();
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let output = '';
    this.exited = new Promise((resolve) => child.once('close', () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited (${code}):\n${output}`));
      });
    });
  }

  /** SIGSTOP: the server keeps its connections open but answers nothing (a hung or partitioned Redis). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

describe.skipIf(!withRedis)('event ingestion under faults (BullMQ mode)', () => {
  describe('the service process', () => {
    it('SIGKILL while the worker drains 20,000 acknowledged events: after a restart each is stored exactly once', async () => {
      const setup = await serviceSetup(TEST_REDIS_URL);
      // A worker holding 4 jobs at a time writes them as one group insert, and drains slowly
      // enough for the kill to land in the middle of the queue.
      setup.env.INGEST_WORKER_CONCURRENCY = '4';
      const queue = openQueue(TEST_REDIS_URL, setup.prefix);

      const first = await startService(setup);
      const project = await createProjectOver(setup.base, setup.operatorToken);

      const batches = Array.from({ length: 40 }, (_, b) => events(500, true, `kill-${b}`));
      const acknowledged = new Set<string>();
      const failures: string[] = [];
      const sendStarted = Date.now();
      await inLanes(batches, 4, async (batch) => {
        const reply = await call(setup.base, 'POST', '/api/v1/events/batch?echo=true', { apiKey: project.apiKey, body: { events: batch } });
        if (reply.status !== 200) {
          failures.push(`${reply.status} ${JSON.stringify(reply.body)}`);
          return;
        }
        expect(reply.body.accepted).toBe(batch.length);
        expect(reply.body.results.map((r: { event: { id: string } }) => r.event.id)).toEqual(batch.map((e) => e.eventId));
        for (const event of batch) acknowledged.add(event.eventId as string);
      });
      const sendMs = Date.now() - sendStarted;
      expect(failures).toEqual([]);
      expect(acknowledged.size).toBe(20_000);

      // Kill while the worker is in the middle of the queue: a job running, more waiting.
      let atKill = { wait: 0, active: 0 };
      await eventually('a job in progress with more waiting', 10_000, async () => {
        const counts = await queue.queue.getJobCounts('wait', 'active');
        atKill = { wait: counts.wait ?? 0, active: counts.active ?? 0 };
        return atKill.active > 0 && atKill.wait > 0;
      });
      first.signal('SIGKILL');
      const killed = await first.waitForExit(10_000);
      expect(killed.signal).toBe('SIGKILL');
      const afterKill = await queue.pending();
      expect(afterKill, 'the kill must leave work in the queue').toBeGreaterThan(0);

      const restartAt = Date.now();
      const second = await startService(setup);
      await eventually('the queue drained after the restart', 60_000, async () => (await queue.pending()) === 0);
      const drainMs = Date.now() - restartAt;
      expect(await queue.queue.getJobCounts('failed')).toEqual({ failed: 0 });
      await stopService(second);

      const { copies, indexed, rollupMismatches } = await storedDump(setup.dataDir, project.id);
      expectExactlyOnce(copies, acknowledged);
      // A kill between the part of events and the views' parts leaves these short unless the
      // re-run job repairs them (EventWriter, checkAll).
      expect({ indexed, rollupMismatches }).toEqual({ indexed: 20_000, rollupMismatches: 0 });
      console.info(
        `[SIGKILL] 20,000 acknowledged in ${sendMs} ms; killed with ${atKill.active} active + ${atKill.wait} waiting jobs ` +
          `(${afterKill} pending after the kill); drained ${drainMs} ms after the restart; ${copies.size} rows, no duplicate`,
      );
    }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

    it('Redis unreachable: 503 with Retry-After at once, nothing half-acknowledged; accepted again after Redis returns', async () => {
      const redis = new OwnRedis(await findFreePort(), await makeDataDir());
      stopWhenDone(() => redis.kill());
      await redis.start();
      const setup = await serviceSetup(redis.url);
      const service = await startService(setup);
      const project = await createProjectOver(setup.base, setup.operatorToken);

      const acknowledged = new Set<string>();
      const refused = new Set<string>();

      async function track(withId: boolean): Promise<Reply> {
        const [event] = events(1, withId, 'redis') as [EventBody];
        const reply = await call(setup.base, 'POST', '/api/v1/events/track', { apiKey: project.apiKey, body: event });
        if (reply.status === 200) {
          if (withId) expect(reply.body.id).toBe(event.eventId);
          acknowledged.add(reply.body.id);
        } else if (event.eventId) refused.add(event.eventId);
        return reply;
      }
      async function batch(count: number, withIds: boolean): Promise<Reply> {
        const sent = events(count, withIds, 'redis');
        const reply = await call(setup.base, 'POST', '/api/v1/events/batch?echo=true', { apiKey: project.apiKey, body: { events: sent } });
        if (reply.status === 200) {
          expect(reply.body.accepted).toBe(count);
          for (const { event } of reply.body.results as { event: { id: string } }[]) acknowledged.add(event.id);
        } else for (const event of sent) if (event.eventId) refused.add(event.eventId);
        return reply;
      }
      const expectOk = (reply: Reply) => expect(reply.status, JSON.stringify(reply.body)).toBe(200);

      // Before: accepted.
      for (const withIds of [true, false]) {
        expectOk(await batch(200, withIds));
        for (let i = 0; i < 10; i++) expectOk(await track(withIds));
      }
      const before = acknowledged.size;

      // Redis dies (no request in flight).
      await redis.kill();
      const outage: Reply[] = [];
      for (let round = 0; round < 3; round++) {
        outage.push(await track(true), await track(false), await batch(100, true), await batch(100, false));
      }
      for (const reply of outage) {
        expect(reply.status, JSON.stringify(reply.body)).toBe(503);
        expect(reply.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
        expect(reply.body.reason.length).toBeGreaterThan(0);
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(reply.ms, 'a 503 must come at once, not after a hang').toBeLessThan(3_000);
      }
      expect(acknowledged.size).toBe(before);
      expect(refused.size).toBe(3 * 101);

      // Redis returns on the same port, with what it had written: the service reconnects alone.
      await redis.start();
      const backAt = Date.now();
      await eventually('an event accepted again', 20_000, async () => {
        const reply = await track(true);
        expect([200, 503], JSON.stringify(reply.body)).toContain(reply.status);
        return reply.status === 200;
      });
      const reconnectMs = Date.now() - backAt;
      for (const withIds of [true, false]) {
        expectOk(await batch(200, withIds));
        for (let i = 0; i < 10; i++) expectOk(await track(withIds));
      }

      const queue = openQueue(redis.url, setup.prefix);
      await eventually('the queue drained', 30_000, async () => (await queue.pending()) === 0);
      expect(await queue.queue.getJobCounts('failed')).toEqual({ failed: 0 });
      await stopService(service);

      const copies = await storedCopies(setup.dataDir, project.id);
      expectExactlyOnce(copies, acknowledged, refused);
      const slowest = Math.max(...outage.map((reply) => reply.ms));
      console.info(
        `[Redis down] ${outage.length} requests refused (slowest ${slowest} ms, ${refused.size} client ids); ` +
          `accepted again ${reconnectMs} ms after Redis returned; ${copies.size} rows = acknowledged, none refused`,
      );
    }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

    it('Redis hanging (answers nothing): 503 after a bounded wait, and a retry with the same eventIds is stored once', async () => {
      const redis = new OwnRedis(await findFreePort(), await makeDataDir());
      stopWhenDone(() => redis.kill());
      await redis.start();
      const setup = await serviceSetup(redis.url);
      const service = await startService(setup);
      const project = await createProjectOver(setup.base, setup.operatorToken);
      const acknowledged = new Set<string>();

      const before = events(100, true, 'hang-before');
      const ok = await call(setup.base, 'POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events: before } });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      for (const event of before) acknowledged.add(event.eventId as string);

      // Only events with a client eventId here. One without, refused with a 503 after the wait,
      // is still queued once Redis answers again (the queue.add given up on in
      // src/ingest/queue/queue-sink.ts is not cancelled), so "a refused event is never stored" does not
      // hold for it today: a known gap, reported rather than asserted.
      redis.pause();
      const stalledBatch = events(100, true, 'hang');
      const [stalledTrack] = events(1, true, 'hang') as [EventBody];
      const outage = await Promise.all([
        call(setup.base, 'POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events: stalledBatch } }),
        call(setup.base, 'POST', '/api/v1/events/track', { apiKey: project.apiKey, body: stalledTrack }),
      ]);
      for (const reply of outage) {
        expect(reply.status, JSON.stringify(reply.body)).toBe(503);
        expect(reply.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(reply.ms, 'a hung Redis must not hang the request').toBeLessThan(8_000);
      }
      redis.resume();

      // The client retries the refused requests as they were: accepted, same ids, stored once.
      await eventually('the refused batch accepted on retry', 20_000, async () => {
        const reply = await call(setup.base, 'POST', '/api/v1/events/batch?echo=true', {
          apiKey: project.apiKey,
          body: { events: stalledBatch },
        });
        expect([200, 503], JSON.stringify(reply.body)).toContain(reply.status);
        if (reply.status !== 200) return false;
        expect(reply.body.results.map((r: { event: { id: string } }) => r.event.id)).toEqual(stalledBatch.map((e) => e.eventId));
        return true;
      });
      const retried = await call(setup.base, 'POST', '/api/v1/events/track', { apiKey: project.apiKey, body: stalledTrack });
      expect(retried.status, JSON.stringify(retried.body)).toBe(200);
      expect(retried.body.id).toBe(stalledTrack.eventId);
      for (const event of [...stalledBatch, stalledTrack]) acknowledged.add(event.eventId as string);

      const queue = openQueue(redis.url, setup.prefix);
      await eventually('the queue drained', 30_000, async () => (await queue.pending()) === 0);
      await stopService(service);
      const copies = await storedCopies(setup.dataDir, project.id);
      expectExactlyOnce(copies, acknowledged);
      console.info(
        `[Redis hung] 503 after ${Math.max(...outage.map((reply) => reply.ms))} ms; retried with the same eventIds: ` +
          `${copies.size} rows, each once`,
      );
    }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts
  });

  describe('ClickHouse inserts failing for a while', () => {
    const server = useTestServer({
      redis: true,
      clickhouse: (dataDir) => {
        const faulty = createFaultyClickHouse(dataDir);
        faults = faulty.faults;
        return faulty.client;
      },
    });
    let faults: FaultSwitch;

    afterEach(() => {
      if (faults) faults.mode = undefined;
    });

    const queue = () => {
      const q = server.services.queue;
      if (!q) throw new Error('the test server has no queue');
      return q;
    };
    async function pending(): Promise<number> {
      const counts = await queue().getJobCounts(...PENDING_STATES);
      return PENDING_STATES.reduce((sum, state) => sum + (counts[state] ?? 0), 0);
    }
    /** The highest attemptsMade among the jobs still queued. */
    async function maxAttemptsMade(): Promise<number> {
      const jobs = await queue().getJobs(['delayed', 'wait', 'active', 'prioritized']);
      return Math.max(0, ...jobs.map((job) => job?.attemptsMade ?? 0));
    }
    async function storedIds(projectId: string): Promise<Map<string, number>> {
      const rows = await server.clickhouseRows<{ id: string; copies: string }>(
        'SELECT toString(event_id) AS id, count() AS copies FROM events WHERE project_id = {p:UUID} GROUP BY event_id',
        { p: projectId },
      );
      return new Map(rows.map((row) => [row.id, Number(row.copies)]));
    }

    /** 3 batches of 500 (two with client eventIds) and 500 single tracks (half with eventIds). */
    async function send2000(project: TestProject): Promise<Set<string>> {
      const acknowledged = new Set<string>();
      const statuses: number[] = [];
      const batches = [events(500, true, 'ch-a'), events(500, false, 'ch-b'), events(500, true, 'ch-c')];
      const singles = [...events(250, true, 'ch-d'), ...events(250, false, 'ch-e')];
      await Promise.all([
        inLanes(batches, 3, async (batch) => {
          const reply = await server.request('POST', '/api/v1/events/batch?echo=true', { apiKey: project.apiKey, body: { events: batch } });
          statuses.push(reply.status);
          if (reply.status === 200) for (const { event } of reply.body.results as { event: { id: string } }[]) acknowledged.add(event.id);
        }),
        inLanes(singles, 25, async (event) => {
          const reply = await server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, body: event });
          statuses.push(reply.status);
          if (reply.status === 200) acknowledged.add(reply.body.id);
        }),
      ]);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(acknowledged.size).toBe(2_000);
      return acknowledged;
    }

    it('inserts refused: the API keeps acknowledging, the worker retries, every event lands once the faults stop', async () => {
      const project = await createProject(server, { plan: 'pro' });
      const failuresBefore = faults.failuresOf('events');
      faults.mode = 'refuse';
      const faultsOn = Date.now();
      const acknowledged = await send2000(project);
      const ackMs = Date.now() - faultsOn;

      let attemptsMade = 0;
      await eventually('a failed insert retried by the queue', 10_000, async () => {
        attemptsMade = Math.max(attemptsMade, await maxAttemptsMade());
        return faults.failuresOf('events') > failuresBefore && attemptsMade > 0;
      });
      expect((await storedIds(project.id)).size, 'nothing can be stored while inserts fail').toBe(0);
      // Fixed on purpose: the faults last at least 2.5 s, time for the queue to give up or lose events.
      await sleep(Math.max(0, faultsOn + 2_500 - Date.now()));
      attemptsMade = Math.max(attemptsMade, await maxAttemptsMade());
      faults.mode = undefined;
      const failed = faults.failuresOf('events') - failuresBefore;
      const faultsOff = Date.now();

      let copies = new Map<string, number>();
      await eventually('all 2,000 events in ClickHouse', 30_000, async () => {
        copies = await storedIds(project.id);
        return copies.size >= 2_000 && (await pending()) === 0;
      });
      const landMs = Date.now() - faultsOff;
      expect(await queue().getJobCounts('failed')).toEqual({ failed: 0 });
      expectExactlyOnce(await storedIds(project.id), acknowledged);
      console.info(
        `[ClickHouse refuses] 2,000 acknowledged in ${ackMs} ms while inserts failed; ${failed} failed insert attempts, ` +
          `jobs retried up to attemptsMade=${attemptsMade}; all landed ${landMs} ms after the faults stopped`,
      );
    }, 60_000);

    it('insert answers lost: the retried job finds its rows already stored and stores nothing twice', async () => {
      const project = await createProject(server, { plan: 'pro' });
      const attemptsBefore = faults.attemptsOf('events');
      const failuresBefore = faults.failuresOf('events');
      faults.mode = 'lose-answer';
      const faultsOn = Date.now();
      // Server-assigned ids: nothing but the insert deduplication token can tell a retry apart.
      const acknowledged = new Set<string>();
      for (const batch of [events(500, false, 'lost-a'), events(500, false, 'lost-b')]) {
        const reply = await server.request('POST', '/api/v1/events/batch?echo=true', { apiKey: project.apiKey, body: { events: batch } });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        for (const { event } of reply.body.results as { event: { id: string } }[]) acknowledged.add(event.id);
      }
      let attemptsMade = 0;
      await eventually('an insert whose answer was lost, retried by the queue', 10_000, async () => {
        attemptsMade = Math.max(attemptsMade, await maxAttemptsMade());
        return faults.failuresOf('events') > failuresBefore && attemptsMade > 0;
      });
      // Fixed on purpose: the faults last at least 2.5 s, time for the queue to give up or lose events.
      await sleep(Math.max(0, faultsOn + 2_500 - Date.now()));
      attemptsMade = Math.max(attemptsMade, await maxAttemptsMade());
      faults.mode = undefined;
      await eventually('the queue drained', 30_000, async () => (await pending()) === 0);
      expect(await queue().getJobCounts('failed')).toEqual({ failed: 0 });

      const attempts = faults.attemptsOf('events') - attemptsBefore;
      const lost = faults.failuresOf('events') - failuresBefore;
      // Inserts whose answers were lost really happened; the retries found those rows stored.
      expect(lost).toBeGreaterThan(0);
      expect(attempts).toBeGreaterThanOrEqual(lost);
      expectExactlyOnce(await storedIds(project.id), acknowledged);
      console.info(
        `[ClickHouse answers lost] ${attempts} inserts reached ClickHouse (${lost} answers lost, attemptsMade up to ${attemptsMade}); ` +
          `1,000 rows stored once`,
      );
    }, 60_000);
  });
});
