/**
 * The live view, GET /projects/:id/live (issue 24, docs/insights.md): Server-Sent Events of the
 * project's acknowledged events within 2 s, from one feed per process; heartbeats; a clean close
 * that frees the account's slot; the per-account cap (429); below Pro only predefined events; and
 * BullMQ mode with two API processes (this one and a spawned `src/main.ts` on the same PostgreSQL
 * and Redis queue prefix), where a stream on either sees events acknowledged by the other.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BoundedEventWriter, LIVE_STREAM_BEHIND_BYTES, LIVE_STREAM_MAX_OWED_BYTES } from '../../src/api/live/bounded-stream.js';
import { findFreePort } from '../../src/core/net.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { provide, stopWhenDone } from '../helpers/lifecycle.js';
import { makeDataDir, PROCESS_TEST_TIMEOUT_MS, PROCESS_WAIT_FLOOR_MS, serviceEnv, spawnScript } from '../helpers/process.js';
import { TEST_REDIS_URL, useTestServer } from '../helpers/server.js';
import { call, serviceSetup, startService } from '../helpers/service.js';

type SseMessage = { event: string; data: string } | { comment: string };

/** An open SSE stream, its messages parsed as they arrive; closed when its test finishes. */
class Stream {
  readonly messages: SseMessage[] = [];
  readonly #abort = new AbortController();
  #buffer = '';
  status = 0;
  #done: Promise<void> = Promise.resolve();

  static async open(base: string, project: TestProject): Promise<Stream> {
    const stream = new Stream();
    stopWhenDone(() => stream.close());
    const response = await fetch(`${base}/api/v1/projects/${project.id}/live`, {
      headers: { authorization: `Bearer ${project.account.adminToken}` },
      signal: stream.#abort.signal,
    });
    stream.status = response.status;
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body?.getReader();
    const decoder = new TextDecoder();
    stream.#done = (async () => {
      try {
        for (;;) {
          const chunk = await reader?.read();
          if (!chunk || chunk.done) return;
          stream.#feed(decoder.decode(chunk.value, { stream: true }));
        }
      } catch {
        // aborted by close()
      }
    })();
    return stream;
  }

  #feed(text: string) {
    this.#buffer += text;
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const lines = block.split('\n');
      if (lines.every((line) => line.startsWith(':'))) {
        this.messages.push({ comment: lines.map((line) => line.slice(1).trim()).join('\n') });
        continue;
      }
      const field = (name: string) => lines.find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
      const event = field('event');
      if (event !== undefined) this.messages.push({ event, data: field('data') ?? '' });
    }
  }

  events(): Record<string, unknown>[] {
    return this.messages.flatMap((m) => ('event' in m && m.event === 'event' ? [JSON.parse(m.data) as Record<string, unknown>] : []));
  }

  /** Waits until `probe` holds; answers how long that took (ms). */
  waitFor(what: string, timeoutMs: number, probe: () => boolean): Promise<number> {
    return eventually(what, timeoutMs, async () => probe()).catch((error: Error) => {
      throw new Error(`${error.message}; got ${JSON.stringify(this.messages)}`);
    });
  }

  ready(timeoutMs = 10_000) {
    return this.waitFor('event: ready', timeoutMs, () => this.messages.some((m) => 'event' in m && m.event === 'ready'));
  }

  async close() {
    this.#abort.abort();
    await this.#done;
  }
}

async function track(base: string, project: TestProject, eventName: string, userId = 'live-user') {
  const response = await fetch(`${base}/api/v1/events/track`, {
    method: 'POST',
    headers: { 'x-api-key': project.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ eventName, userId, properties: { n: 1 } }),
  });
  expect(response.status).toBe(200);
  // The stream carries the SPEC 2.7 event; the track answer adds `success` for the Kotlin SDK.
  const { success, ...event } = (await response.json()) as Record<string, unknown>;
  expect(success).toBe(true);
  return event;
}

describe('live view, one API process (embedded)', () => {
  const server = useTestServer({ env: { LIVE_HEARTBEAT_SECONDS: '1', LIVE_MAX_CONNECTIONS_PER_ACCOUNT: '2' } });
  const open = (project: TestProject) => Stream.open(server.url, project);

  it('streams each acknowledged event of the project, in the SPEC 2.7 shape, within 2 s; not other projects’ events', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const other = await createProject(server, { plan: 'pro' });
    const stream = await open(project);
    expect(stream.status).toBe(200);
    await stream.ready();
    const started = Date.now();
    const tracked = await track(server.url, project, 'checkout');
    await track(server.url, other, 'checkout');
    await stream.waitFor('the tracked event', 2_000, () => stream.events().length >= 1);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(stream.events()).toEqual([tracked]);
    expect(Object.keys(tracked).sort()).toEqual(['created_at', 'event_name', 'id', 'properties', 'user_id']);
  });

  it('sends heartbeats', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const stream = await open(project);
    await stream.waitFor('a heartbeat', 3_000, () => stream.messages.some((m) => 'comment' in m && m.comment === 'heartbeat'));
  });

  it('below Pro only the predefined events are sent', async () => {
    const project = await createProject(server, { plan: 'free' });
    const stream = await open(project);
    await stream.ready();
    expect(stream.messages.find((m) => 'event' in m && m.event === 'ready')).toEqual({
      event: 'ready',
      data: '{"event_scope":"predefined_only"}',
    });
    await track(server.url, project, 'custom_thing');
    await track(server.url, project, 'feedback_list');
    await stream.waitFor('the predefined event', 2_000, () => stream.events().length >= 1);
    // Fixed on purpose: time for the custom event to (wrongly) follow.
    await sleep(200);
    expect(stream.events().map((e) => e.event_name)).toEqual(['feedback_list']);
  });

  it('caps open streams per account (429), and a stream closed by its client frees its slot', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const first = await open(project);
    const second = await open(project);
    await Promise.all([first.ready(), second.ready()]);
    const refused = await server.request('GET', `/api/v1/projects/${project.id}/live`, { bearer: project.account.adminToken });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: true,
      reason: 'at most 2 live streams per account at once',
      message: 'at most 2 live streams per account at once',
    });
    await first.close();
    let again: Stream | undefined;
    await eventually('the closed stream’s slot freed', 10_000, async () => {
      if (again) await again.close();
      again = await open(project);
      return again.status === 200;
    }).catch(() => undefined); // the expectation below shows the last answer
    expect(again?.status).toBe(200);
    const unauthenticated = await fetch(`${server.url}/api/v1/projects/${project.id}/live`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe('live view in BullMQ mode with two API processes', () => {
  const server = useTestServer({ redis: true });
  // The second API process, on the first one's database and queue; stopped with this block,
  // before the first one closes (it deletes the queue's keys).
  const b = provide(
    'second API process',
    async () => {
      const config = server.services.config;
      const proc = spawnScript(
        'src/main.ts',
        serviceEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: await makeDataDir(),
          DATABASE_URL: config.databaseUrl,
          REDIS_URL: TEST_REDIS_URL,
          QUEUE_PREFIX: config.queuePrefix,
          OPERATOR_TOKEN: `fbo_test_${randomBytes(16).toString('hex')}`,
          LOG_LEVEL: 'info',
        }),
      );
      const [, port] = await proc.waitForStdout(/"port":(\d+)[^\n]*feedback service listening/, PROCESS_WAIT_FLOOR_MS);
      return { proc, base: `http://127.0.0.1:${port}` };
    },
    ({ proc }) => proc.stop(),
    PROCESS_TEST_TIMEOUT_MS,
  );

  it('a stream on either process sees the events the other acknowledged, within 2 s', { timeout: 60_000 }, async () => {
    const project = await createProject(server, { plan: 'pro' });
    const onA = await Stream.open(server.url, project);
    const onB = await Stream.open(b.base, project);
    await Promise.all([onA.ready(), onB.ready()]);
    const fromA = await track(server.url, project, 'from_a');
    const fromB = await track(b.base, project, 'from_b');
    const started = Date.now();
    await onA.waitFor('both events on A', 2_000, () => onA.events().length >= 2);
    await onB.waitFor('both events on B', 2_000, () => onB.events().length >= 2);
    expect(Date.now() - started).toBeLessThan(2_000);
    const sortById = (list: Record<string, unknown>[]) => [...list].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(sortById(onA.events())).toEqual(sortById([fromA, fromB]));
    expect(sortById(onB.events())).toEqual(sortById([fromA, fromB]));
  });

  it('a graceful stop ends the open streams at once instead of waiting for them', { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const project = await createProject(server, { plan: 'pro' });
    const onB = await Stream.open(b.base, project);
    await onB.ready();
    const started = Date.now();
    b.proc.signal('SIGTERM');
    const exit = await b.proc.waitForExit(PROCESS_WAIT_FLOOR_MS);
    expect(exit.code, b.proc.describe()).toBe(0);
    // The shutdown's own grace for requests in flight is 10 s: the stream did not hold it.
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});

/**
 * A live stream read through a plain HTTP request, whose socket the test can stop reading. It
 * keeps counts, not text: a reading client gets megabytes a second here.
 */
class RawStream {
  /** `event: event` messages received. */
  events = 0;
  /** Everything else, in order: `ready`, `skipped <n>` (with `events` at that moment), `event <name>` for names but `flood`. */
  readonly log: Array<{ what: string; events: number }> = [];
  readonly #request: http.ClientRequest;
  #response: http.IncomingMessage | undefined;
  #partial = '';

  constructor(base: string, projectId: string, adminToken: string) {
    stopWhenDone(() => this.destroy());
    this.#request = http.get(`${base}/api/v1/projects/${projectId}/live`, {
      agent: false,
      headers: { authorization: `Bearer ${adminToken}` },
    });
    this.#request.on('response', (response) => {
      this.#response = response;
      response.setEncoding('utf8').on('data', (chunk: string) => this.#feed(chunk));
    });
    this.#request.on('error', () => {});
  }

  #feed(chunk: string) {
    const blocks = (this.#partial + chunk).split('\n\n');
    this.#partial = blocks.pop() ?? '';
    for (const block of blocks) {
      if (block.includes('\nevent: event\n')) {
        this.events++;
        const name = /"event_name":"([^"]*)"/.exec(block)?.[1];
        if (name !== 'flood') this.log.push({ what: `event ${name}`, events: this.events });
      } else if (block.includes('event: skipped\n')) {
        this.log.push({ what: `skipped ${/"skipped":(\d+)/.exec(block)?.[1]}`, events: this.events });
      } else if (block.includes('event: ready\n')) {
        this.log.push({ what: 'ready', events: this.events });
      }
    }
  }

  /** Stops reading: the response and its socket are paused, so the kernel's buffers fill and stay full. */
  pause() {
    this.#response?.pause();
    this.#response?.socket.pause();
  }

  resume() {
    this.#response?.socket.resume();
    this.#response?.resume();
  }

  destroy() {
    this.#request.destroy();
  }
}

/** The service's memory: resident (from /proc, Linux) and Node's external memory (its own metrics), in MB. */
async function memoryMb(pid: number, metricsPort: number): Promise<{ rss: number; external: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024;
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const external = Number(/^nodejs_external_memory_bytes (\S+)$/m.exec(metrics)?.[1]) / 1024 / 1024;
  return { rss, external };
}

/*
 * Issue 33 §1: clients that stop reading must not make the service buffer their events. One
 * service process, ten streams, the same flood twice: first while the clients read (the baseline:
 * what ingestion itself holds, chDB's inserts included), then while they are paused. The service's
 * resident and external memory are sampled throughout; the paused phase's external memory (where
 * the owed bytes lived) may exceed the reading phase's by less than 60 MB: the bound lets ten streams
 * hold 10 MiB, the phase-to-phase noise of ingestion's own external memory reached +37 MB in a
 * loaded CI run, and without the bound the growth is +109 MB. CI floods LIVE_FLOOD_SECONDS (default 6) per phase;
 * `npm run bench:live` runs the 20 s. CI's events carry LIVE_FLOOD_PAD_BYTES (default
 * 8,000) of properties: each paused client is then owed far more than the kernel's socket buffers
 * absorb (about 4 MB a connection here), so without the bound the test fails (+109 MB external).
 */
describe('live view: clients that stop reading (a real service process)', () => {
  const seconds = Number(process.env.LIVE_FLOOD_SECONDS ?? 6);
  const padBytes = Number(process.env.LIVE_FLOOD_PAD_BYTES ?? 8_000);
  const perSecond = 500;
  const raws: RawStream[] = [];

  it(`10 paused clients under ${perSecond} events/s for ${seconds} s leave no backlog in the service (its external memory grows < 60 MB); a resumed client hears how many it missed, then live events`, {
    timeout: PROCESS_TEST_TIMEOUT_MS + seconds * 6_000,
  }, async () => {
    const setup = await serviceSetup();
    const metricsPort = await findFreePort();
    setup.env.METRICS_PORT = String(metricsPort);
    setup.env.LIVE_MAX_CONNECTIONS_PER_ACCOUNT = '20';
    setup.env.LIVE_HEARTBEAT_SECONDS = '1';
    const service = await startService(setup);
    const account = await call(setup.base, 'POST', '/api/v1/admin/accounts', {
      bearer: setup.operatorToken,
      body: { email: `live-${randomUUID()}@example.com`, plan: 'pro' },
    });
    expect(account.status).toBe(200);
    const adminToken = account.body.admin_token as string;
    const project = await call(setup.base, 'POST', '/api/v1/projects', { bearer: adminToken, body: { name: 'live flood' } });
    expect(project.status).toBe(200);
    const projectId = project.body.id as string;
    const apiKey = project.body.api_key as string;

    const pad = 'x'.repeat(padBytes);
    let sent = 0;
    /**
     * Posts `perSecond * seconds` events in batches of 50, at most `perSecond` a second, from three
     * senders at once, while sampling the service's memory; answers the phase's peaks.
     */
    const floodPhase = async () => {
      const started = Date.now();
      const first = sent;
      const peak = await memoryMb(service.pid, metricsPort);
      let sending = true;
      const sampler = (async () => {
        while (sending) {
          const now = await memoryMb(service.pid, metricsPort);
          peak.rss = Math.max(peak.rss, now.rss);
          peak.external = Math.max(peak.external, now.external);
          await sleep(200); // the sampling interval
        }
      })();
      const sender = async () => {
        // The whole count, however long a loaded machine takes: the bytes owed are the point.
        while (sent - first < perSecond * seconds) {
          if (sent - first >= Math.floor(((Date.now() - started) / 1_000) * perSecond)) {
            await sleep(20); // pacing: at most perSecond events a second
            continue;
          }
          const events = Array.from({ length: 50 }, (_, i) => ({ eventName: 'flood', userId: `u${i}`, properties: { n: sent + i, pad } }));
          sent += events.length;
          const reply = await call(setup.base, 'POST', '/api/v1/events/batch', { apiKey, body: { events }, timeoutMs: 60_000 });
          expect(reply.status).toBe(200);
        }
      };
      await Promise.all([sender(), sender(), sender()]);
      sending = false;
      await sampler;
      return { ...peak, events: sent - first, ms: Date.now() - started };
    };

    for (let i = 0; i < 10; i++) raws.push(new RawStream(setup.base, projectId, adminToken));
    await eventually('every stream ready', 30_000, async () => raws.every((raw) => raw.log.some((entry) => entry.what === 'ready')));
    const reading = await floodPhase();
    // Every reading client got every event of the phase.
    await eventually('the reading clients caught up', 30_000, async () => raws.every((raw) => raw.events === reading.events)).catch(
      (error: Error) => {
        throw new Error(`${error.message}: ${reading.events} sent, ${JSON.stringify(raws.map((raw) => [raw.events, raw.log]))}`);
      },
    );

    for (const raw of raws) raw.pause();
    const resumed = raws[0] as RawStream;
    const eventsBeforePause = resumed.events;
    const paused = await floodPhase();

    const rssGrowth = paused.rss - reading.rss;
    const externalGrowth = paused.external - reading.external;
    console.log(
      `live flood, ${padBytes} B of properties an event, 10 streams: reading ${reading.events} events in ${reading.ms} ms, ` +
        `peak RSS ${reading.rss.toFixed(0)} MB, external ${reading.external.toFixed(0)} MB; paused ${paused.events} events in ${paused.ms} ms, ` +
        `peak RSS ${paused.rss.toFixed(0)} MB (${rssGrowth >= 0 ? '+' : ''}${rssGrowth.toFixed(1)}), external ${paused.external.toFixed(0)} MB ` +
        `(${externalGrowth >= 0 ? '+' : ''}${externalGrowth.toFixed(1)})`,
    );
    // Node's external memory is where the owed bytes lived (issue 33: +265 MB; +303 MB here in 20 s
    // without the bound), and it barely moves otherwise. RSS is printed, not checked: it also holds
    // V8's uncollected garbage and chDB's inserts, and on this shared machine its peaks moved by
    // -47 to +153 MB between two phases with the bound and +101 MB without it (measured).
    // 60 MB sits between what the bound allows plus that noise (10 MiB + up to 37 MB seen under CI
    // load) and what the service holds without the bound (+109 MB).
    expect(externalGrowth).toBeLessThan(60);

    // One client reads again: first the rest of what it was owed, then the notice, then live events.
    resumed.resume();
    await eventually('the skip notice', 30_000, async () => resumed.log.some((entry) => entry.what.startsWith('skipped')));
    const marker = `marker_${randomBytes(4).toString('hex')}`;
    const tracked = await call(setup.base, 'POST', '/api/v1/events/track', { apiKey, body: { eventName: marker, userId: 'u-marker' } });
    expect(tracked.status).toBe(200);
    await eventually('the live event', 10_000, async () => resumed.log.some((entry) => entry.what === `event ${marker}`));
    const afterReady = resumed.log.filter((entry) => entry.what !== 'ready');
    const notice = afterReady[0];
    const skipped = Number(notice?.what.split(' ')[1]);
    const received = (notice?.events ?? 0) - eventsBeforePause;
    // Nothing but the notice and then the live event: no second gap, no flood event after the notice.
    expect(afterReady).toEqual([
      { what: `skipped ${skipped}`, events: eventsBeforePause + received },
      { what: `event ${marker}`, events: eventsBeforePause + received + 1 },
    ]);
    console.log(`live flood: the resumed client got ${received} events of the paused phase, then skipped ${skipped}`);
    // It got what it could hold, then heard of every event of the phase it missed: the notice counts exactly.
    expect(skipped).toBeGreaterThan(0);
    expect(received + skipped).toBe(paused.events);
  });
});

/** The bound itself, on a stream nobody reads until the test says so (src/api/live/bounded-stream.ts). */
describe('BoundedEventWriter: what a live stream may owe its client', () => {
  const message = (n: number | string) => `event: event\ndata: ${JSON.stringify({ n, pad: 'x'.repeat(1_000) })}\n\n`;
  const unread = () => {
    const stream = new PassThrough();
    const writer = new BoundedEventWriter(stream, () => stream.writableLength + stream.readableLength);
    return { stream, writer, owed: () => stream.writableLength + stream.readableLength };
  };
  const readAll = (stream: PassThrough) => {
    const got = { text: '' };
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      got.text += chunk;
    });
    return got;
  };

  it('past the budget skips what arrives, then, once read, says how many before live events again', async () => {
    const { stream, writer, owed } = unread();
    for (let n = 0; n < 1_000; n++) writer.writeEvents([n], message);
    expect(owed()).toBeLessThanOrEqual(LIVE_STREAM_BEHIND_BYTES + message(999).length);
    const skipped = writer.skipped;
    const written = 1_000 - skipped;
    expect(skipped).toBeGreaterThan(500);
    writer.writeComment('heartbeat'); // nothing while behind
    const got = readAll(stream);
    await eventually('the notice', 5_000, async () => got.text.includes('event: skipped'));
    writer.writeEvents(['live'], message);
    await eventually('the live event', 5_000, async () => got.text.includes('"n":"live"'));
    const blocks = got.text.split('\n\n').filter(Boolean);
    expect(blocks).toHaveLength(written + 2);
    expect(blocks.slice(0, written).every((block, i) => block.includes(`"n":${i},`))).toBe(true);
    expect(blocks[written]).toBe(`event: skipped\ndata: {"skipped":${skipped}}`);
    expect(blocks[written + 1]).toContain('"n":"live"');
    expect(got.text).not.toContain('heartbeat');
  });

  it('a batch reaches a client that is not behind whole up to the most a stream may owe; its tail is skipped', async () => {
    const { writer, owed } = unread();
    const perEvent = message(0).length;
    const fits = Math.floor(LIVE_STREAM_MAX_OWED_BYTES / (perEvent + 2));
    writer.writeEvents(
      Array.from({ length: fits }, (_, n) => n),
      message,
    );
    expect(writer.skipped).toBe(0);
    expect(owed()).toBeGreaterThan(LIVE_STREAM_BEHIND_BYTES);
    // Behind now: the next batch is skipped whole, and nothing more is held.
    const before = owed();
    writer.writeEvents([1, 2, 3], message);
    expect(writer.skipped).toBe(3);
    expect(owed()).toBe(before);
    // A batch larger than the most a stream may owe: written up to it, the rest counted.
    const fresh = unread();
    fresh.writer.writeEvents(
      Array.from({ length: 2 * fits }, (_, n) => n),
      message,
    );
    const got = readAll(fresh.stream);
    await eventually('the written part read', 5_000, async () => fresh.owed() === 0);
    expect(got.text.length).toBeLessThanOrEqual(LIVE_STREAM_MAX_OWED_BYTES);
    const written = got.text.split('\n\n').filter(Boolean).length;
    expect(written).toBeGreaterThan(fits - 2);
    expect(fresh.writer.skipped).toBe(2 * fits - written);
  });
});
