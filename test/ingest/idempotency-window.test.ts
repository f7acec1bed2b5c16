import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { simulateEmbeddedWindow, simulateRedisWindow, storeOldRows, writerCosts } from '../../bench/idempotency-window.js';
import { useEmbeddedClickHouse } from '../helpers/embedded-clickhouse.js';
import { redisAvailable } from '../helpers/redis.js';
import { TEST_REDIS_URL } from '../helpers/server.js';

/*
 * The small, fast version of `npm run bench:idempotency` (issue 22, "Idempotency memory" and
 * "Idempotency cost"): 50 new eventIds a second over the whole window with the clock advanced,
 * real chDB and Redis, the sinks' own code for every checked retry.
 */
const withRedis = await redisAvailable();
const IDS_PER_SECOND = 50;

describe('idempotency window', () => {
  const chdb = useEmbeddedClickHouse('idempotency');

  it('embedded: a full window at 3-3.5 bytes an id, a restart in seconds, every retry answered with the stored event and stored once', async () => {
    const report = await simulateEmbeddedWindow({
      dataDir: chdb.dataDir,
      clickhouse: chdb.clickhouse,
      idsPerSecond: IDS_PER_SECOND,
      falseHitProbes: 50_000,
    });
    expect(report.rememberedIds).toBeGreaterThanOrEqual(IDS_PER_SECOND * 24 * 3600);
    expect(report.bytesPerId).toBeLessThanOrEqual(8);
    expect(report.diskBytes ?? Number.POSITIVE_INFINITY).toBeLessThanOrEqual(8 * report.rememberedIds);
    expect(report.restartSeconds).toBeLessThan(5);
    expect(report.falseHitRate).toBeLessThan(0.002);
    expect(report.sampled).toBe(24 * 10);
    expect(report.answeredDuplicate).toBe(report.sampled);
    expect(report.storedOnce).toBe(report.sampled);
    expect(report.newIdsAccepted).toBe(100);
  }, 120_000);

  it.skipIf(!withRedis)(
    'BullMQ: the same in Redis without modules, and a stored retry is not queued again',
    async () => {
      const redis = new Redis(TEST_REDIS_URL);
      const prefix = `test-idem-${randomUUID().slice(0, 8)}`;
      try {
        const report = await simulateRedisWindow({
          redis,
          prefix,
          clickhouse: chdb.clickhouse,
          idsPerSecond: IDS_PER_SECOND,
          falseHitProbes: 5_000,
        });
        expect(report.rememberedIds).toBeGreaterThanOrEqual(IDS_PER_SECOND * 24 * 3600);
        expect(report.bytesPerId).toBeLessThanOrEqual(8);
        expect(report.falseHitRate).toBeLessThan(0.002);
        expect(report.sampled).toBe(24 * 10);
        expect(report.answeredDuplicate).toBe(report.sampled);
        expect(report.storedOnce).toBe(report.sampled);
        expect(report.newIdsAccepted).toBe(100);
      } finally {
        const keys = await redis.keys(`${prefix}:*`);
        if (keys.length > 0) await redis.del(...keys);
        redis.disconnect();
      }
    },
    120_000,
  );

  it('with 5 M older rows stored, the writer costs within 1.2x per event of a project with none', async () => {
    const full = randomUUID();
    const none = randomUUID();
    // 5 M rows, not the 50 M of `npm run bench:idempotency` (0.93x, BENCHMARKS.md): storing and
    // merging 50 M wrote gigabytes while other test files ran, and slowed their fsyncs past their
    // waits. The lookup of old (165 ms per 750 ids at 20 M rows) would measure about 1.8x here.
    await storeOldRows(chdb.clickhouse, full, 5_000_000);
    // Batches of the two projects take turns, so a neighbour test file's load weighs on both
    // alike, and each is taken at its lower quartile, the batches least slowed by that load (one
    // after the other, medians drifted by up to a quarter between phases).
    const [withRows, withNone] = await writerCosts(chdb.clickhouse, [full, none], { batches: 25, batchSize: 750 });
    expect(withRows?.lowerQuartileMicroseconds).toBeLessThanOrEqual(1.2 * (withNone?.lowerQuartileMicroseconds ?? 0));
  }, 300_000);
});
