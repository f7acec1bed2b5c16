import { UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { EventWriter } from '../ingest/event-writer.js';
import type { Logger } from '../logger.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import { observeInsert, type Metrics } from '../observability/metrics.js';
import { insertFacts } from '../olap/facts.table.js';
import { INGEST_QUEUE, type IngestJobData, type IngestJobName } from './ingest.queue.js';

export type IngestWorkerOptions = {
  /**
   * Jobs processed at once by this process. 1 by default: jobs are then written in queue order,
   * which is what lets a retried client eventId find its first copy already stored.
   */
  concurrency?: number;
  /** A job whose process died is taken up again after about this long. */
  lockDurationMs?: number;
};

/**
 * Consumes the ingest queue: each job becomes one ClickHouse insert whose deduplication token is
 * derived from the job id, so a job run again after a crash (or a retry after an insert whose
 * answer was lost) never stores its rows twice. A job leaves the queue only after its insert.
 */
export function startIngestWorker(deps: {
  connection: Redis;
  prefix: string;
  clickhouse: ClickHouseClient;
  writer: EventWriter;
  logger: Logger;
  metrics?: Metrics;
  options?: IngestWorkerOptions;
}): Worker<IngestJobData, void, IngestJobName> {
  const { logger } = deps;
  const lockDuration = deps.options?.lockDurationMs ?? 10_000;
  const worker = new Worker<IngestJobData, void, IngestJobName>(
    INGEST_QUEUE,
    async (job) => {
      const token = `${job.name}:${job.id}`;
      if (job.name === 'events' && 'events' in job.data && Array.isArray(job.data.events)) {
        const result = await deps.writer.write(job.data.events, token);
        logger.debug({ jobId: job.id, events: job.data.events.length, inserted: result.inserted }, 'events written');
        return;
      }
      if (job.name === 'facts' && 'facts' in job.data && Array.isArray(job.data.facts)) {
        const facts = job.data.facts;
        await observeInsert(deps.metrics, 'facts', facts.length, () => insertFacts(deps.clickhouse, facts, token));
        return;
      }
      // A payload no code version can write would fail forever: fail it at once, visibly.
      throw new UnrecoverableError(`malformed ${job.name} job`);
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency: deps.options?.concurrency ?? 1,
      lockDuration,
      stalledInterval: Math.max(1_000, Math.floor(lockDuration / 2)),
      // A crash in the middle of a job makes it "stalled"; allow several before giving up on it.
      maxStalledCount: 10,
      autorun: true,
    },
  );
  worker.on('failed', (job, error) => {
    logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: error }, 'ingest job failed');
  });
  worker.on('error', (error) => logger.error({ err: error }, 'ingest worker error'));
  return worker;
}
