import { describe, expect, it } from 'vitest';
import { eventually, sleep } from '../helpers/eventually.js';
import { createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { recordingFetch, sdkClient } from './sdk-client.js';
import { switchableProxy } from './switchable-proxy.js';

/*
 * Offline (issue 22, "Proof"), in both ingest modes: the service cannot be reached for a while
 * (connections refused: test/sdk/switchable-proxy.ts), then comes back. The events the app
 * tracked meanwhile are delivered once, in the order tracked for each user. (A real stop and
 * restart of the service, SIGKILL included, is sdk-crash.test.ts.)
 */

type Row = { id: string; user_id: string; created_at: string; received_at: string; i: number };

describe.each([
  { mode: 'embedded', redis: false },
  { mode: 'BullMQ', redis: true },
])('SDK offline ($mode)', ({ redis }) => {
  const server = useTestServer({ redis });

  it('unreachable while the app tracks, then back: every event delivered once, in tracking order per user', async () => {
    const project = await createProject(server);
    const proxy = await switchableProxy(Number(new URL(server.url).port));
    await proxy.down();
    const { fetch, sent } = recordingFetch();
    const client = sdkClient(proxy.url, project.apiKey, { fetch, flushAt: 20, maxBatchSize: 50, retryBaseMs: 100, retryMaxMs: 1_000 });
    const users = ['ana', 'ben', 'cho'];
    const tracked: string[] = [];
    for (let i = 0; i < 300; i++) {
      tracked.push(client.track('sdk_offline', { i }, { userId: users[i % users.length] as string }));
      if (i % 20 === 19) await sleep(20); // pacing: an app tracking over time
    }
    // The SDK keeps trying meanwhile: refused, retried with backoff.
    await eventually('attempts refused while unreachable', 15_000, async () => sent.length >= 3);
    const refused = sent.length;
    expect(sent.every((request) => request.status === undefined)).toBe(true);
    expect(refused, 'attempts while unreachable').toBeGreaterThan(1);
    expect(client.stats()).toMatchObject({ queued: 300, delivered: 0 });

    await proxy.up();
    await eventually('the queue delivered after the service came back', 15_000, async () => client.stats().queued === 0);
    expect(client.stats()).toMatchObject({ delivered: 300, duplicates: 0, rejected: 0, discarded: 0, dropped: 0 });
    expect(sent.slice(refused).map((request) => request.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await client.shutdown();
    await proxy.close();

    await server.eventsVisible();
    const rows = await server.clickhouseRows<Row>(
      `SELECT toString(event_id) AS id, user_id, toString(created_at) AS created_at, toString(received_at) AS received_at,
              JSONExtractInt(properties_raw, 'i') AS i
       FROM events WHERE project_id = {p:UUID}`,
      { p: project.id },
    );
    expect(rows.map((row) => row.id).sort(), 'each tracked event stored once, nothing else').toEqual([...tracked].sort());
    for (const user of users) {
      const mine = rows.filter((row) => row.user_id === user);
      const tracking = mine.map((row) => row.i).sort((a, b) => a - b);
      // Delivered in order: no event of a user reached the service before one tracked earlier.
      const byArrival = [...mine].sort((a, b) => a.received_at.localeCompare(b.received_at) || a.i - b.i).map((row) => row.i);
      expect(byArrival).toEqual(tracking);
      // Stored at the time tracked, shifted only by the request's time in transit (received − sentAt,
      // one clock here): never earlier, and not by the seconds the events waited offline.
      for (const row of mine) {
        const trackedAt = Number.parseInt(row.id.replaceAll('-', '').slice(0, 12), 16); // UUIDv7's milliseconds
        const shift = Date.parse(`${row.created_at.replace(' ', 'T')}Z`) - trackedAt;
        expect(shift, `event ${row.i}`).toBeGreaterThanOrEqual(0);
        expect(shift, `event ${row.i}`).toBeLessThan(1_000);
      }
    }
    console.info(`[offline] ${refused} refused attempts while unreachable; 300 events then delivered in ${sent.length - refused} requests`);
  }, 60_000);
});
