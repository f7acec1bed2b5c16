import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { QueuedEvent } from '../../sdk/dist/node.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { recordingFetch, sdkClient } from './sdk-client.js';

/*
 * The SDK's delivery against the real service (issue 22, "Proof"), in both ingest modes: a gzipped
 * batch lands, a poison event is reported and never retried while the rest land, a device clock
 * two hours behind is corrected by the batch's sentAt, and a 413 halves the batch.
 */

type Row = { id: string; event_name: string; user_id: string; created_at: string };

describe.each([
  { mode: 'embedded', redis: false },
  { mode: 'BullMQ', redis: true },
])('SDK delivery ($mode)', ({ redis }) => {
  const server = useTestServer({ redis });
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  async function storedRows(ids: string[]): Promise<Row[]> {
    await server.eventsVisible();
    return server.clickhouseRows<Row>(
      `SELECT toString(event_id) AS id, event_name, user_id, toString(created_at) AS created_at
       FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)} ORDER BY created_at, event_id`,
      { p: project.id, ids },
    );
  }

  it('a gzipped batch lands: the request carries Content-Encoding gzip and every event is stored once', async () => {
    const { fetch, sent } = recordingFetch();
    const client = sdkClient(server.url, project.apiKey, { fetch, flushAt: 1000 });
    const user = `gzip-${randomUUID()}`;
    const ids = Array.from({ length: 40 }, (_, i) =>
      client.track('sdk_gzip', { i, note: 'compressible text '.repeat(5) }, { userId: user }),
    );
    await client.flush();
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      status: 200,
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
    });
    const plainBytes = Buffer.byteLength(JSON.stringify({ events: ids }));
    expect(sent[0]?.bytes, 'the body on the wire is gzip, far smaller than the JSON').toBeLessThan(plainBytes * 4);
    const rows = await storedRows(ids);
    expect(rows.map((row) => row.id).sort()).toEqual([...ids].sort());
    expect(client.stats()).toMatchObject({ delivered: 40, rejected: 0, queued: 0 });
    await client.shutdown();
  });

  it('a poison event in a batch: the others land, the bad one is reported once and never sent again', async () => {
    const { fetch, sent } = recordingFetch();
    const rejected: { event: QueuedEvent; reason: string }[] = [];
    const client = sdkClient(server.url, project.apiKey, {
      fetch,
      flushAt: 1000,
      onRejected: (event, reason) => rejected.push({ event, reason }),
    });
    const user = `poison-${randomUUID()}`;
    const good = Array.from({ length: 5 }, (_, i) => client.track('sdk_poison', { i }, { userId: user }));
    const poison = client.track('x'.repeat(101), { bad: true }, { userId: user });
    good.push(...Array.from({ length: 5 }, (_, i) => client.track('sdk_poison', { i: i + 5 }, { userId: user })));
    await client.flush();
    await client.flush();
    expect(sent, 'one request: the rejected event is not retried').toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.event.eventId).toBe(poison);
    expect(rejected[0]?.reason).toMatch(/eventName/);
    expect(client.stats()).toMatchObject({ delivered: 10, rejected: 1, queued: 0 });
    const rows = await storedRows([...good, poison]);
    expect(rows.map((row) => row.id).sort()).toEqual([...good].sort());
    await client.shutdown();
  });

  it('a device clock 2 hours behind: the batch’s sentAt puts the events on the server’s timeline', async () => {
    const skewMs = -2 * 60 * 60 * 1000;
    const client = sdkClient(server.url, project.apiKey, { flushAt: 1000, now: () => Date.now() + skewMs });
    const before = Date.now();
    const ids = Array.from({ length: 3 }, (_, i) => client.track('sdk_skew', { i }, { userId: `skew-${randomUUID()}` }));
    await client.flush();
    const after = Date.now();
    const rows = await storedRows(ids);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      const at = Date.parse(`${row.created_at.replace(' ', 'T')}Z`);
      // The device said ~2 h ago; stored at the server's time (a little slack for the request's own time).
      expect(at).toBeGreaterThanOrEqual(before - 2_000);
      expect(at).toBeLessThanOrEqual(after + 2_000);
    }
    await client.shutdown();
  });

  it('a 413 halves the batch: the same events then land in two requests, each stored once', async () => {
    const { fetch, sent } = recordingFetch();
    const client = sdkClient(server.url, project.apiKey, { fetch, flushAt: 1000, maxBatchSize: 200, gzip: false });
    // 200 events of ~30 KB each: about 6 MB, over the batch route's 5 MiB bound.
    const filler = 'f'.repeat(30_000);
    const ids = Array.from({ length: 200 }, (_, i) => client.track('sdk_413', { i, filler }, { userId: 'big' }));
    await client.flush();
    expect(sent.map((request) => request.status)).toEqual([413, 200, 200]);
    const rows = await storedRows(ids);
    expect(rows).toHaveLength(200);
    expect(client.stats()).toMatchObject({ delivered: 200, queued: 0 });
    await client.shutdown();
  }, 60_000);
});
