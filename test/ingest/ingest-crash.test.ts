import { randomUUID } from 'node:crypto';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import { logLine } from '../../src/ingest/log/log-lines.js';
import { LogEventSink } from '../../src/ingest/log/log-sink.js';
import type { EventWriter } from '../../src/ingest/writer/event-writer.js';
import type { ClickHouseClient } from '../../src/olap/clickhouse.js';
import { createProjectOver } from '../helpers/factories.js';
import { logLines } from '../helpers/process.js';
import { eventually } from '../helpers/redis.js';
import {
  call,
  type EventBody,
  expectExactlyOnce,
  inLanes,
  serviceSetup,
  startService,
  stopService,
  storedCopies,
} from '../helpers/service.js';

/*
 * Crashes of the embedded service (issue 15, "Proof"): real `npm start` processes, SIGKILLed,
 * against real PostgreSQL and their own chDB. An event acknowledged (200) is in the local
 * ingest log; after a restart ClickHouse holds each acknowledged event exactly once.
 */

/** Bytes of a stopped or running service's ingest log not yet shipped, read from its files. */
async function logBacklog(dataDir: string): Promise<{ unshipped: number; shipping: unknown }> {
  const dir = path.join(dataDir, 'ingest-log');
  const checkpoint = JSON.parse(await readFile(path.join(dir, 'checkpoint.json'), 'utf8')) as { shipped: number; shipping: unknown };
  const segments = (await readdir(path.join(dir, 'segments'))).filter((name) => name.endsWith('.seg')).sort();
  const last = segments.at(-1);
  const end = last ? Number(last.slice(0, 16)) + (await stat(path.join(dir, 'segments', last))).size : checkpoint.shipped;
  return { unshipped: end - checkpoint.shipped, shipping: checkpoint.shipping };
}

describe('embedded ingestion across crashes', () => {
  it('SIGKILL in the middle of 50,000 acknowledged track and batch events: after a restart each is stored exactly once', async () => {
    const setup = await serviceSetup();
    // The driver sends thousands of requests a second with one key: no per-key budget applies.
    setup.env.RATE_LIMIT_INGEST = '1000000/s';
    let service = await startService(setup);
    const project = await createProjectOver(setup.base, setup.operatorToken);

    // Every event carries a client eventId, as an SDK that retries does: a request cut by the
    // kill is sent again after the restart and must then be stored once and answered the same.
    const batches = Array.from({ length: 45 }, () => Array.from({ length: 1000 }, (_, i) => trackBody(i)));
    const singles = Array.from({ length: 5000 }, (_, i) => trackBody(i));
    const acknowledged = new Set<string>();
    const answers = new Map<string, { user_id: string; created_at: string }>();
    const unanswered: { batch?: EventBody[]; single?: EventBody }[] = [];
    /** Answers other than 200 (connection errors aside): none is expected. */
    const statuses: number[] = [];
    const KILL_AT = 20_000;
    let killed = false;
    let ackedAtKill = 0;
    const killIfDue = () => {
      if (killed || acknowledged.size < KILL_AT) return;
      killed = true;
      ackedAtKill = acknowledged.size;
      service.signal('SIGKILL');
    };

    async function sendBatch(batch: EventBody[]): Promise<boolean> {
      try {
        const reply = await call(setup.base, 'POST', '/api/v1/events/batch?echo=true', {
          apiKey: project.apiKey,
          body: { events: batch },
          timeoutMs: 15_000,
        });
        if (reply.status !== 200) {
          statuses.push(reply.status);
          return false;
        }
        expect(reply.body.results.map((r: { event: { id: string } }) => r.event.id)).toEqual(batch.map((e) => e.eventId));
        for (const { event } of reply.body.results as { event: { id: string; user_id: string; created_at: string } }[]) {
          acknowledged.add(event.id);
          answers.set(event.id, event);
        }
        return true;
      } catch {
        return false; // connection refused or reset: not acknowledged
      }
    }
    async function sendSingle(event: EventBody): Promise<boolean> {
      try {
        const reply = await call(setup.base, 'POST', '/api/v1/events/track', { apiKey: project.apiKey, body: event, timeoutMs: 15_000 });
        if (reply.status !== 200) {
          statuses.push(reply.status);
          return false;
        }
        expect(reply.body.id).toBe(event.eventId);
        acknowledged.add(reply.body.id);
        answers.set(reply.body.id, reply.body);
        return true;
      } catch {
        return false;
      }
    }

    const started = Date.now();
    await Promise.all([
      inLanes(batches, 3, async (batch) => {
        if (!(await sendBatch(batch))) unanswered.push({ batch });
        killIfDue();
      }),
      inLanes(singles, 40, async (single) => {
        if (!(await sendSingle(single))) unanswered.push({ single });
        killIfDue();
      }),
    ]);
    expect(killed, 'the kill happened while events were being sent').toBe(true);
    const exit = await service.waitForExit(10_000);
    expect(exit.signal).toBe('SIGKILL');
    const atKill = await logBacklog(setup.dataDir);

    // Restart: what the log held is shipped; the cut requests are retried until answered.
    const restartAt = Date.now();
    service = await startService(setup);
    const opened = logLines(service.stdout).find((line) => line.msg === 'ingest log opened');
    expect(opened, service.describe().slice(-3_000)).toBeDefined();
    await inLanes(unanswered, 20, async (item) => {
      const ok = item.batch ? await sendBatch(item.batch) : await sendSingle(item.single as EventBody);
      expect(ok, `a retried request is accepted after the restart (non-200 answers: ${statuses.join(', ')})`).toBe(true);
    });
    expect(statuses).toEqual([]);
    expect(acknowledged.size).toBe(50_000);

    // A retry of an event acknowledged before the kill, with another body, is answered with the
    // event first stored: shipped ones through the id index and a lookup, others from the log.
    const retriedIds = [...answers.keys()].slice(0, 20).concat([...answers.keys()].slice(ackedAtKill - 20, ackedAtKill));
    for (const id of retriedIds) {
      const reply = await call(setup.base, 'POST', '/api/v1/events/track', {
        apiKey: project.apiKey,
        body: { eventName: 'crash_retry', userId: 'someone-else', eventId: id },
      });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ id, user_id: answers.get(id)?.user_id, created_at: answers.get(id)?.created_at });
    }

    await eventually('the ingest log shipped', 60_000, async () => (await logBacklog(setup.dataDir)).unshipped === 0);
    const drainMs = Date.now() - restartAt;
    await stopService(service);
    const copies = await storedCopies(setup.dataDir, project.id);
    expectExactlyOnce(copies, acknowledged);
    console.info(
      `[SIGKILL] killed after ${ackedAtKill} acknowledged (${Date.now() - started} ms in all); ${atKill.unshipped} bytes of the log ` +
        `unshipped at the kill${atKill.shipping ? ' with an insert in flight' : ''}; ${unanswered.length} cut requests retried after the restart; ` +
        `log shipped ${drainMs} ms after the restart; ${copies.size} rows, each once`,
    );
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

  it('a graceful stop that may not ship (INGEST_LOG_SHUTDOWN_SECONDS=0) exits 0 and leaves the events in the log; the next start ships each once', async () => {
    const setup = await serviceSetup();
    setup.env.INGEST_LOG_SHUTDOWN_SECONDS = '0';
    let service = await startService(setup);
    const project = await createProjectOver(setup.base, setup.operatorToken);
    const acknowledged = new Set<string>();
    // The first batch ships at once (an idle log); the next ones wait for the shipper's interval.
    const batches = Array.from({ length: 12 }, () => Array.from({ length: 500 }, (_, i) => trackBody(i)));
    await inLanes(batches, 4, async (batch) => {
      const reply = await call(setup.base, 'POST', '/api/v1/events/batch', { apiKey: project.apiKey, body: { events: batch } });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      for (const event of batch) acknowledged.add(event.eventId as string);
    });
    await stopService(service); // asserts exit code 0
    const left = await logBacklog(setup.dataDir);
    expect(left.unshipped, 'events left in the log for the next start').toBeGreaterThan(0);
    const before = await storedCopies(setup.dataDir, project.id);
    expect(before.size).toBeLessThan(acknowledged.size);

    service = await startService(setup);
    await eventually('the ingest log shipped', 30_000, async () => (await logBacklog(setup.dataDir)).unshipped === 0);
    await stopService(service);
    expectExactlyOnce(await storedCopies(setup.dataDir, project.id), acknowledged);
    console.info(
      `[stop, no time to ship] ${before.size} of ${acknowledged.size} stored at the stop, ${left.unshipped} bytes left in the log; all stored once after the next start`,
    );
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

  it('a log whose last record is cut in half: the service recovers every record before it and ships each once', async () => {
    const setup = await serviceSetup();
    const projectId = randomUUID();
    const dir = path.join(setup.dataDir, 'ingest-log');
    // The log as a service leaves it: written through the sink itself, never shipped (no
    // ClickHouse here: the sink only touches it when shipping, which this one never starts).
    const notShipping = undefined as unknown;
    const sink = await LogEventSink.open({
      dir,
      maxBytes: 1 << 30,
      shutdownShipMs: 0,
      writer: notShipping as EventWriter,
      clickhouse: notShipping as ClickHouseClient,
      logger: pino({ level: 'silent' }),
    });
    const frames = [0, 1, 2].map((f) => Array.from({ length: 200 }, (_, i) => ingestEvent(projectId, f, i)));
    for (const frame of frames) await sink.submit(frame); // one request a frame
    await sink.close();
    const [segment] = await readdir(path.join(dir, 'segments'));
    const file = path.join(dir, 'segments', segment as string);
    const size = (await stat(file)).size;
    const lastFrameBytes = Buffer.byteLength(frames[2]?.map(logLine).join('') ?? '') + 28;
    const handle = await open(file, 'r+');
    await handle.truncate(size - Math.floor(lastFrameBytes / 2));
    await handle.close();

    const service = await startService(setup);
    const opened = logLines(service.stdout).find((line) => line.msg === 'ingest log opened');
    expect(opened, service.describe().slice(-3_000)).toMatchObject({ tornTailBytes: Math.ceil(lastFrameBytes / 2), damage: [] });
    await eventually('the ingest log shipped', 30_000, async () => (await logBacklog(setup.dataDir)).unshipped === 0);
    await stopService(service);
    const copies = await storedCopies(setup.dataDir, projectId);
    const expected = new Set([...(frames[0] ?? []), ...(frames[1] ?? [])].map((event) => event.event_id));
    expectExactlyOnce(copies, expected, new Set(frames[2]?.map((event) => event.event_id)));
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts
});

function trackBody(i: number): EventBody {
  return { eventName: 'crash', userId: `user-${i % 97}`, eventId: randomUUID(), properties: { i } };
}

function ingestEvent(projectId: string, frame: number, i: number): IngestEvent {
  const at = new Date().toISOString();
  return {
    project_id: projectId,
    event_id: randomUUID(),
    event_name: 'torn',
    user_id: `u${i}`,
    properties: { frame, i },
    created_at: at,
    received_at: at,
    id_from_client: i % 2 === 0,
  };
}
