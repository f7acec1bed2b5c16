/**
 * The live view, GET /projects/:id/live (issue 24, docs/insights.md): Server-Sent Events of the
 * project's acknowledged events within 2 s, from one feed per process; heartbeats; a clean close
 * that frees the account's slot; the per-account cap (429); below Pro only predefined events; and
 * BullMQ mode with two API processes (this one and a spawned `src/main.ts` on the same PostgreSQL
 * and Redis queue prefix), where a stream on either sees events acknowledged by the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { makeDataDir, removeDataDirs, serviceEnv, spawnScript, stopAll } from '../helpers/process.js';
import { startTestServer, TEST_REDIS_URL, type TestServer } from '../helpers/server.js';

type SseMessage = { event: string; data: string } | { comment: string };

/** An open SSE stream, its messages parsed as they arrive. */
class Stream {
  readonly messages: SseMessage[] = [];
  readonly #abort = new AbortController();
  #buffer = '';
  status = 0;
  #done: Promise<void> = Promise.resolve();

  static async open(base: string, project: TestProject): Promise<Stream> {
    const stream = new Stream();
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

  async waitFor(what: string, timeoutMs: number, probe: () => boolean): Promise<number> {
    const started = Date.now();
    while (!probe()) {
      if (Date.now() - started > timeoutMs)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; got ${JSON.stringify(this.messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return Date.now() - started;
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
  return (await response.json()) as Record<string, unknown>;
}

describe('live view, one API process (embedded)', () => {
  let server: TestServer;
  const streams: Stream[] = [];
  beforeAll(async () => {
    server = await startTestServer({ env: { LIVE_HEARTBEAT_SECONDS: '1', LIVE_MAX_CONNECTIONS_PER_ACCOUNT: '2' } });
  });
  afterEach(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
  });
  afterAll(async () => {
    await server?.close();
  });
  const open = async (project: TestProject) => {
    const stream = await Stream.open(server.url, project);
    streams.push(stream);
    return stream;
  };

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
    await new Promise((resolve) => setTimeout(resolve, 200));
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
    for (let attempt = 0; attempt < 50 && again?.status !== 200; attempt++) {
      if (again) await again.close();
      again = await open(project);
      if (again.status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again?.status).toBe(200);
    const unauthenticated = await fetch(`${server.url}/api/v1/projects/${project.id}/live`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe('live view in BullMQ mode with two API processes', () => {
  let server: TestServer;
  let baseB = '';
  let procB: ReturnType<typeof spawnScript>;
  const streams: Stream[] = [];
  beforeAll(async () => {
    server = await startTestServer({ redis: true });
    const config = server.services.config;
    procB = spawnScript(
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
    const [, port] = await procB.waitForStdout(/"port":(\d+)[^\n]*feedback service listening/, 90_000);
    baseB = `http://127.0.0.1:${port}`;
  }, 120_000);
  afterAll(async () => {
    await Promise.all(streams.splice(0).map((s) => s.close()));
    await stopAll();
    await removeDataDirs();
    await server?.close();
  });

  it('a stream on either process sees the events the other acknowledged, within 2 s', { timeout: 60_000 }, async () => {
    const project = await createProject(server, { plan: 'pro' });
    const onA = await Stream.open(server.url, project);
    const onB = await Stream.open(baseB, project);
    streams.push(onA, onB);
    await Promise.all([onA.ready(), onB.ready()]);
    const fromA = await track(server.url, project, 'from_a');
    const fromB = await track(baseB, project, 'from_b');
    const started = Date.now();
    await onA.waitFor('both events on A', 2_000, () => onA.events().length >= 2);
    await onB.waitFor('both events on B', 2_000, () => onB.events().length >= 2);
    expect(Date.now() - started).toBeLessThan(2_000);
    const sortById = (list: Record<string, unknown>[]) => [...list].sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(sortById(onA.events())).toEqual(sortById([fromA, fromB]));
    expect(sortById(onB.events())).toEqual(sortById([fromA, fromB]));
  });

  it('a graceful stop ends the open streams at once instead of waiting for them', { timeout: 30_000 }, async () => {
    const project = await createProject(server, { plan: 'pro' });
    const onB = await Stream.open(baseB, project);
    streams.push(onB);
    await onB.ready();
    const started = Date.now();
    procB.signal('SIGTERM');
    const exit = await procB.waitForExit(9_000);
    expect(exit.code, procB.describe()).toBe(0);
    // The shutdown's own grace for requests in flight is 10 s: the stream did not hold it.
    expect(Date.now() - started).toBeLessThan(8_000);
  });
});
