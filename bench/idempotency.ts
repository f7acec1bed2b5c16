/**
 * `npm run bench:idempotency` — the idempotency proof of issue 22 at full scale
 * (bench/idempotency-window.ts says what each phase does):
 *
 *   window  --rate new eventIds a second over the whole window (28 simulated hours), per mode:
 *           bytes per remembered id, peak RSS (embedded) or Redis memory (bullmq), restart time,
 *           false-hit rate, and the retries of sampled ids (answered duplicate, stored once)
 *   cost    the writer's CPU per event with client eventIds, on an empty table and with --rows
 *           rows already stored (target: within 1.2x)
 *
 * Everything runs against a fresh chDB in a temporary directory, and (bullmq) the Redis of
 * REDIS_URL (default 127.0.0.1:6379) under a random prefix; all of it is removed at the end.
 *
 * Options: --phases window,cost  --modes embedded,bullmq  --rate 10000  --rows 50000000
 *          --batches 21 (cost: batches of --batch-size 750 events)
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createClickHouse } from '../src/olap/clickhouse.js';
import { migrateClickHouse } from '../src/olap/migrations.js';
import { simulateEmbeddedWindow, simulateRedisWindow, storeOldRows, type WindowReport, writerCost } from './idempotency-window.js';

const { values } = parseArgs({
  options: {
    phases: { type: 'string', default: 'window,cost' },
    modes: { type: 'string', default: 'embedded,bullmq' },
    rate: { type: 'string', default: '10000' },
    rows: { type: 'string', default: '50000000' },
    batches: { type: 'string', default: '21' },
    'batch-size': { type: 'string', default: '750' },
  },
});
const phases = new Set((values.phases ?? '').split(','));
const modes = new Set((values.modes ?? '').split(','));
const rate = Number(values.rate);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function printWindow(report: WindowReport): void {
  console.log(`\n== window, ${report.mode}: ${report.idsPerSecond} ids/s over ${report.simulatedHours} simulated hours`);
  console.log(`remembered ids        ${report.rememberedIds.toLocaleString('en')}`);
  console.log(`filter memory         ${mib(report.memoryBytes)} = ${report.bytesPerId.toFixed(2)} bytes per id (target <= 8)`);
  if (report.diskBytes !== undefined) {
    console.log(`on disk               ${mib(report.diskBytes)} = ${(report.diskBytes / report.rememberedIds).toFixed(2)} bytes per id`);
  }
  console.log(`${report.mode === 'embedded' ? 'peak RSS (process)   ' : 'peak Redis growth    '}  ${mib(report.peakBytes)}`);
  console.log(`fill                  ${report.fillSeconds.toFixed(1)} s`);
  if (report.restartSeconds !== undefined) {
    console.log(`restart (sink open)   ${report.restartSeconds.toFixed(2)} s, ${report.restartCpuSeconds?.toFixed(2)} s of CPU`);
    console.log(`RSS after restart     ${mib(report.rssAfterRestartBytes ?? 0)} (the process, chDB included, the fill's filter released)`);
  }
  console.log(`false hits            ${(report.falseHitRate * 100).toFixed(3)}% of new ids (each: one ClickHouse lookup)`);
  console.log(
    `retries of sampled    ${report.answeredDuplicate}/${report.sampled} answered with the stored event, ${report.storedOnce}/${report.sampled} stored once; new ids accepted and stored: ${report.newIdsAccepted}/100`,
  );
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-idempotency-'));
const clickhouse = createClickHouse({ url: undefined, dataDir });
console.log(
  `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? '?'}, ${mib(os.totalmem())} RAM, load ${os.loadavg()[0]?.toFixed(1)}; node ${process.version}`,
);
try {
  await migrateClickHouse(clickhouse);
  if (phases.has('window') && modes.has('embedded')) {
    printWindow(await simulateEmbeddedWindow({ dataDir, clickhouse, idsPerSecond: rate }));
  }
  if (phases.has('window') && modes.has('bullmq')) {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `bench-idem-${randomUUID().slice(0, 8)}`;
    try {
      printWindow(await simulateRedisWindow({ redis, prefix, clickhouse, idsPerSecond: rate }));
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
      redis.disconnect();
    }
  }
  if (phases.has('cost')) {
    const projectId = randomUUID();
    const options = { batches: Number(values.batches), batchSize: Number(values['batch-size']) };
    const empty = await writerCost(clickhouse, projectId, options);
    const rows = Number(values.rows);
    const started = performance.now();
    await storeOldRows(clickhouse, projectId, rows);
    console.log(`\n== cost: stored ${rows.toLocaleString('en')} older rows in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    const full = await writerCost(clickhouse, projectId, options);
    console.log(
      `writer CPU per event, empty table   ${empty.microsecondsPerEvent.toFixed(1)} µs (lookup of ${options.batchSize} ids ${empty.lookupMs.toFixed(1)} ms)`,
    );
    console.log(
      `writer CPU per event, ${rows.toLocaleString('en')} rows  ${full.microsecondsPerEvent.toFixed(1)} µs (lookup ${full.lookupMs.toFixed(1)} ms)`,
    );
    console.log(
      `ratio                               ${(full.microsecondsPerEvent / empty.microsecondsPerEvent).toFixed(2)} (target <= 1.2)`,
    );
  }
} finally {
  await clickhouse.close();
  await rm(dataDir, { recursive: true, force: true });
}
