import { UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import type { IngestEvent } from '../../core/event.js';
import type { Logger } from '../../core/logger.js';
import { MicroBatcher } from '../micro-batcher.js';
import type { EventWriter, WriteResult } from '../writer/event-writer.js';
import type { FactWriter } from '../writer/fact-writer.js';
import { INGEST_QUEUE, type IngestJobData, type IngestJobName } from './ingest.queue.js';
import { releaseClaims } from './redis-id-claims.js';

/**
 * Under load, at most one ClickHouse insert per this long, so inserts stay large: a chDB insert
 * costs about 20 ms of CPU whatever its size, on the API's cores (BENCHMARKS.md). The API has
 * answered long before; this only delays visibility in ClickHouse. An insert starts sooner when
 * the worker holds as many jobs as it may (its concurrency): it could take no more meanwhile.
 */
const MIN_INSERT_INTERVAL_MS = 500;

/**
 * Holds what this turn writes to `connection` and sends it as one write at the end of the turn.
 * When a group insert is done, every job of the group completes at once: each completion is a
 * Redis command, and each command was a write system call of its own (a visible share of the
 * API's thread, which runs this worker with embedded ClickHouse: BENCHMARKS.md, "BullMQ request
 * path"). Corking the socket sends them together; their order, and so every reply, is unchanged.
 */
function batchWritesOfThisTurn(connection: Redis): void {
  const socket = connection.stream;
  if (!socket || socket.writableCorked > 0) return;
  socket.cork();
  setImmediate(() => socket.uncork());
}

export type IngestWorkerOptions = {
  /**
   * Jobs this process holds at once. Their events are written together, in one insert per
   * flush, so this bounds the size of a ClickHouse insert in jobs.
   */
  concurrency?: number;
  /** A job whose process died is taken up again after about this long. */
  lockDurationMs?: number;
};

/**
 * Consumes the ingest queue. The API makes one small job per few milliseconds of traffic, and a
 * ClickHouse insert has a high fixed cost, so the events of the jobs this worker holds at once
 * are written together, one insert per flush (measured: one insert per job fell behind the API,
 * BENCHMARKS.md). A job leaves the queue only after the insert holding its events succeeded.
 *
 * Exactly once: a job on its first run cannot have been written before, so it joins a group
 * insert. A job that ran before (a retry after a failed or unanswered insert, or taken up again
 * after its process died) may have been written as part of some group: it is written on its own,
 * under a token derived from its id, after dropping every event ClickHouse already holds. All
 * writes of this process are serialized, so the duplicate checks of client eventIds cannot race.
 *
 * A row ClickHouse refuses for its data does not fail its job (nor the other jobs of its group):
 * the writers isolate it into the dead letters and store the rest. Only an engine failure, or
 * dead letters that cannot be recorded, fail the job, which is then retried.
 */
export function startIngestWorker(deps: {
  connection: Redis;
  prefix: string;
  writer: EventWriter;
  factWriter: FactWriter;
  logger: Logger;
  options?: IngestWorkerOptions;
}): Worker<IngestJobData, void, IngestJobName> {
  const { logger } = deps;
  const lockDuration = deps.options?.lockDurationMs ?? 10_000;
  const concurrency = deps.options?.concurrency ?? 256;
  // Stored events' client eventIds are remembered by the filter from now on: their claims (the
  // whole first event) go. Not awaited: a claim left behind only expires later (CLAIM_TTL_SECONDS).
  const forgetClaims = (events: IngestEvent[]) => {
    releaseClaims(deps.connection, deps.prefix, events).catch((error: unknown) =>
      logger.warn({ err: error }, 'claims of stored eventIds not removed (they expire)'),
    );
  };
  let lane: Promise<unknown> = Promise.resolve();
  const serialized = <T>(write: () => Promise<T>): Promise<T> => {
    const run = lane.then(write, write);
    lane = run.catch(() => undefined);
    return run;
  };
  const groups = new MicroBatcher<IngestEvent, WriteResult>({
    maxItems: 50_000,
    // Jobs arriving while a flush runs wait for the next one anyway; this only bounds the wait
    // of a job that arrives when the worker is idle.
    maxDelayMs: 10,
    maxConcurrentFlushes: 1,
    minFlushIntervalMs: MIN_INSERT_INTERVAL_MS,
    // Each waiting caller is a job this worker holds.
    maxWaiting: concurrency,
    flush: async (events) => {
      const result = await serialized(() => deps.writer.write(events, `events:group:${uuidv7()}`));
      batchWritesOfThisTurn(deps.connection);
      forgetClaims(events);
      return result;
    },
  });
  const worker = new Worker<IngestJobData, void, IngestJobName>(
    INGEST_QUEUE,
    async (job) => {
      const token = `${job.name}:${job.id}`;
      if (job.name === 'events' && 'events' in job.data && Array.isArray(job.data.events)) {
        const events = job.data.events;
        const ranBefore = job.attemptsStarted > 1 || job.attemptsMade > 0 || job.stalledCounter > 0;
        if (ranBefore) {
          const result = await serialized(() => deps.writer.write(events, token, { checkAll: true }));
          forgetClaims(events);
          const log =
            result.repaired && (result.repaired.indexRows > 0 || result.repaired.rollupDays > 0 || result.repaired.userOrderedRows > 0)
              ? logger.warn
              : logger.debug;
          log.call(
            logger,
            { jobId: job.id, events: events.length, inserted: result.inserted, repaired: result.repaired },
            'events of a re-run job written',
          );
        } else {
          await groups.add(events);
        }
        return;
      }
      if (job.name === 'facts' && 'facts' in job.data && Array.isArray(job.data.facts)) {
        const facts = job.data.facts;
        await deps.factWriter.write(facts, token);
        return;
      }
      // A payload no code version can write would fail forever: fail it at once, visibly.
      throw new UnrecoverableError(`malformed ${job.name} job`);
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency,
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
