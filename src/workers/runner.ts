import type { AppContext } from '../context.js';
import { workerRedis } from '../context.js';
import { observeInsert } from '../observability/metrics.js';
import { insertFacts } from '../olap/facts.table.js';
import { enqueueDeliveries } from './deliveries.queue.js';
import { DeliveryPoller, OverdueSweep, startDeliveryQueueWorker, type DeliveryDeps } from './deliveries.worker.js';
import { startIngestWorker } from './ingest.worker.js';
import { NotificationDispatcher, type ScheduleDeliveries } from './notifications.dispatcher.js';
import { OutboxRelay, type FactDelivery } from './outbox.relay.js';

export type Workers = {
  relay: OutboxRelay;
  dispatcher: NotificationDispatcher;
  /** Without Redis: attempts due deliveries in this process. */
  deliveryPoller: DeliveryPoller | undefined;
  deliveryWorker: ReturnType<typeof startDeliveryQueueWorker> | undefined;
  deliveryDeps: DeliveryDeps;
  ingestWorker: ReturnType<typeof startIngestWorker> | undefined;
  stop(): Promise<void>;
};

/** Job id of a relayed outbox batch: the same batch always maps to the same job. */
export const factsJobId = (batchId: string) => `facts-${batchId}`;

/**
 * Starts the background work of this process: with Redis, the BullMQ worker that writes queued
 * events and facts to ClickHouse, and the outbox relay that queues facts; without Redis, the
 * relay alone, writing facts straight to ClickHouse, and the shipper of the API's local ingest
 * log (src/ingest/log), which writes events.
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
  // The local ingest log (embedded mode) ships to ClickHouse from now on: the schema is migrated.
  ctx.eventSink.start?.();
  const relay = new OutboxRelay(ctx.sql, deliver, ctx.logger.child({ component: 'outbox-relay' }));
  relay.start();

  // Notifications: the dispatcher expands them into deliveries; with Redis the deliveries queue
  // carries their attempts (and a sweep re-queues any whose job was lost), without it a poller
  // over the deliveries table does.
  const { delivery } = ctx.config;
  const deliveryDeps: DeliveryDeps = {
    sql: ctx.sql,
    sender: {
      mailer: ctx.mailer,
      publicUrl: delivery.publicUrl,
      timeoutMs: delivery.timeoutMs,
      allowPrivateWebhooks: delivery.allowPrivateWebhooks,
    },
    policy: { maxAttempts: delivery.maxAttempts, timeoutMs: delivery.timeoutMs, backoffMs: delivery.backoffMs },
    logger: ctx.logger.child({ component: 'deliveries' }),
  };
  let deliveryPoller: DeliveryPoller | undefined;
  let deliveryWorker: ReturnType<typeof startDeliveryQueueWorker> | undefined;
  let sweep: OverdueSweep | undefined;
  let schedule: ScheduleDeliveries;
  const deliveryQueue = ctx.deliveryQueue;
  if (deliveryQueue && workerConnection) {
    deliveryWorker = startDeliveryQueueWorker({ ...deliveryDeps, connection: workerConnection, prefix: ctx.config.queuePrefix });
    sweep = new OverdueSweep(ctx.sql, deliveryQueue, deliveryDeps.policy, deliveryDeps.logger);
    sweep.start();
    schedule = (ids) => enqueueDeliveries(deliveryQueue, ids, delivery.maxAttempts);
  } else {
    const poller = new DeliveryPoller(deliveryDeps);
    poller.start();
    deliveryPoller = poller;
    schedule = async () => poller.kick();
  }
  const dispatcher = new NotificationDispatcher(ctx.sql, schedule, ctx.logger.child({ component: 'notifications' }));
  dispatcher.start();

  return {
    relay,
    dispatcher,
    deliveryPoller,
    deliveryWorker,
    deliveryDeps,
    ingestWorker,
    async stop() {
      await relay.stop();
      await dispatcher.stop();
      await sweep?.stop();
      await deliveryPoller?.stop();
      await deliveryWorker?.close();
      // Waits for the job in progress; an unfinished job stays in the queue for the next start.
      await ingestWorker?.close();
      await workerConnection?.quit().catch(() => workerConnection?.disconnect());
    },
  };
}
