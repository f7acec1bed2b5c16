import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import { createLogger } from '../../src/core/logger.js';
import { LogEventSink } from '../../src/ingest/log/log-sink.js';
import { EventWriter } from '../../src/ingest/writer/event-writer.js';
import { useEmbeddedClickHouse } from '../helpers/embedded-clickhouse.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { provide } from '../helpers/lifecycle.js';

/*
 * When the embedded log's shipper inserts (src/ingest/log/shipper.ts): at most once per interval
 * under load, so inserts stay large; but a burst that has ended ships at once, while a trickle
 * still waits for the interval.
 */
const INTERVAL_MS = 10_000;

function events(count: number, bytesEach = 400): IngestEvent[] {
  const now = new Date().toISOString();
  return Array.from({ length: count }, () => ({
    project_id: randomUUID(),
    event_id: randomUUID(),
    event_name: 'burst',
    user_id: 'u',
    properties: { padding: 'x'.repeat(bytesEach - 250) },
    created_at: now,
    received_at: now,
    id_from_client: false,
  }));
}

describe('embedded log shipping after a burst', () => {
  const chdb = useEmbeddedClickHouse('shipper-timing');
  const sink = provide(
    'ingest log',
    async () => {
      const opened = await LogEventSink.open({
        dir: path.join(chdb.dataDir, 'ingest-log'),
        maxBytes: 64 * 1024 * 1024,
        shutdownShipMs: 10_000,
        writer: new EventWriter(chdb.clickhouse, { record: async () => undefined }),
        clickhouse: chdb.clickhouse,
        logger: createLogger('silent'),
        shipper: { intervalMs: INTERVAL_MS },
      });
      opened.start();
      return opened;
    },
    (opened) => opened.close(),
  );

  it('a burst of requests is in ClickHouse soon after it ends, not at the next interval; a trickle waits for the interval', async () => {
    // An idle log ships at once: this insert starts the interval.
    await sink.submit(events(1));
    await eventually('the first insert', 5_000, async () => sink.unshippedBytes === 0);
    const burstEnded = Date.now();
    // About 400 KB in 50 requests, all within the interval.
    await Promise.all(Array.from({ length: 50 }, () => sink.submit(events(20))));
    await eventually('the burst shipped', 3_000, async () => sink.unshippedBytes === 0);
    expect(Date.now() - burstEnded).toBeLessThan(INTERVAL_MS / 2);

    // A single small request right after that insert: kept for the interval, to be coalesced.
    await sink.submit(events(5));
    // Fixed on purpose: time in which a wrong shipper would ship the small request early.
    await sleep(1_000);
    expect(sink.unshippedBytes).toBeGreaterThan(0);
  }, 30_000);
});
