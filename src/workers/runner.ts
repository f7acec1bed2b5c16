import type { AppContext } from '../context.js';
import { workerRedis } from '../context.js';
import { observeInsert } from '../observability/metrics.js';
import { insertFacts } from '../olap/facts.table.js';
import { startIngestWorker } from './ingest.worker.js';
import { OutboxRelay, type FactDelivery } from './outbox.relay.js';

export type Workers = {
  relay: OutboxRelay;
  ingestWorker: ReturnType<typeof startIngestWorker> | undefined;
  stop(): Promise<void>;
};

/** Job id of a relayed outbox batch: the same batch always maps to the same job. */
export const factsJobId = (batchId: string) => `facts-${batchId}`;

/**
 * Starts the background work of this process: with Redis, the BullMQ worker that writes queued
 * events and facts to ClickHouse, and the outbox relay that queues facts; without Redis, the
 * relay alone, writing facts straight to ClickHouse (events are written by the in-process
 * batcher of the API).
 */
export function startWorkers(ctx: AppContext): Workers {
  let ingestWorker: ReturnType<typeof startIngestWorker> | undefined;
  let deliver: FactDelivery;
  let workerConnection: ReturnType<typeof workerRedis> | undefined;
  const queue = ctx.queue;
  if (queue && ctx.config.redisUrl) {
    workerConnection = workerRedis(ctx.config.redisUrl);
    ingestWorker = startIngestWorker({
      connection: workerConnection,
      prefix: ctx.config.queuePrefix,
      clickhouse: ctx.clickhouse,
      writer: ctx.eventWriter,
      metrics: ctx.metrics,
      logger: ctx.logger.child({ component: 'ingest-worker' }),
      options: { concurrency: ctx.config.ingestWorkerConcurrency },
    });
    deliver = async (facts, batchId) => {
      await queue.add('facts', { facts }, { jobId: factsJobId(batchId) });
    };
  } else {
    deliver = (facts, batchId) =>
      observeInsert(ctx.metrics, 'facts', facts.length, () => insertFacts(ctx.clickhouse, facts, `facts:${factsJobId(batchId)}`));
  }
  const relay = new OutboxRelay(ctx.sql, deliver, ctx.logger.child({ component: 'outbox-relay' }));
  relay.start();
  return {
    relay,
    ingestWorker,
    async stop() {
      await relay.stop();
      // Waits for the job in progress; an unfinished job stays in the queue for the next start.
      await ingestWorker?.close();
      await workerConnection?.quit().catch(() => workerConnection?.disconnect());
    },
  };
}
