import { startIngestWorker } from '../ingest/queue/ingest.worker.js';
import { AlertEvaluator } from './alerts.evaluator.js';
import { ChangelogScheduler } from './changelog.scheduler.js';
import type { WorkerDeps } from './deps.js';
import { DigestScheduler } from './digest.scheduler.js';
import { DataRightsWorker, ingestQueueSettled } from './erasure.worker.js';
import { enqueueDeliveries } from './notify/deliveries.queue.js';
import { type DeliveryDeps, DeliveryPoller, OverdueSweep, startDeliveryQueueWorker } from './notify/deliveries.worker.js';
import { NotificationDispatcher, type ScheduleDeliveries } from './notify/notifications.dispatcher.js';
import { type FactDelivery, OutboxRelay } from './outbox.relay.js';
import { workerRedis } from './redis.js';
import { TrackerInboundWorker } from './trackers/inbound.worker.js';

export type Workers = {
  relay: OutboxRelay;
  dispatcher: NotificationDispatcher;
  /** Without Redis: attempts due deliveries in this process. */
  deliveryPoller: DeliveryPoller | undefined;
  deliveryWorker: ReturnType<typeof startDeliveryQueueWorker> | undefined;
  deliveryDeps: DeliveryDeps;
  ingestWorker: ReturnType<typeof startIngestWorker> | undefined;
  /** Erasures and the ClickHouse side of project deletions (docs/data-rights.md). */
  dataRights: DataRightsWorker;
  /** Publishes scheduled changelog entries when their time comes. */
  changelog: ChangelogScheduler;
  /** Applies the issue trackers' recorded webhooks (docs/integrations.md). */
  trackerInbound: TrackerInboundWorker;
  /** Checks alerts on metrics after each interval (docs/notifications.md "Alerts"). */
  alerts: AlertEvaluator;
  /** Sends the weekly digests on Mondays. */
  digest: DigestScheduler;
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
export function startWorkers(deps: WorkerDeps): Workers {
  let ingestWorker: ReturnType<typeof startIngestWorker> | undefined;
  let deliver: FactDelivery;
  let workerConnection: ReturnType<typeof workerRedis> | undefined;
  const queue = deps.queue;
  if (queue && deps.config.redisUrl) {
    workerConnection = workerRedis(deps.config.redisUrl);
    ingestWorker = startIngestWorker({
      connection: workerConnection,
      prefix: deps.config.queuePrefix,
      writer: deps.eventWriter,
      factWriter: deps.factWriter,
      logger: deps.logger.child({ component: 'ingest-worker' }),
      options: { concurrency: deps.config.ingestWorkerConcurrency },
    });
    deliver = async (facts, batchId) => {
      await queue.add('facts', { facts }, { jobId: factsJobId(batchId) });
    };
  } else {
    deliver = async (facts, batchId) => {
      await deps.factWriter.write(facts, `facts:${factsJobId(batchId)}`);
    };
  }
  // The local ingest log (embedded mode) ships to ClickHouse from now on: the schema is migrated.
  deps.eventSink.start?.();
  const relay = new OutboxRelay(deps.sql, deliver, deps.logger.child({ component: 'outbox-relay' }));
  relay.start();

  // Notifications: the dispatcher expands them into deliveries; with Redis the deliveries queue
  // carries their attempts (and a sweep re-queues any whose job was lost), without it a poller
  // over the deliveries table does.
  const { delivery } = deps.config;
  const deliveryDeps: DeliveryDeps = {
    sql: deps.sql,
    sender: {
      mailer: deps.mailer,
      publicUrl: delivery.publicUrl,
      timeoutMs: delivery.timeoutMs,
      allowPrivateWebhooks: delivery.allowPrivateWebhooks,
      trackers: { sql: deps.sql, trackers: deps.trackers, secretBox: deps.secretBox, publicUrl: delivery.publicUrl },
    },
    policy: { maxAttempts: delivery.maxAttempts, timeoutMs: delivery.timeoutMs, backoffMs: delivery.backoffMs },
    logger: deps.logger.child({ component: 'deliveries' }),
  };
  let deliveryPoller: DeliveryPoller | undefined;
  let deliveryWorker: ReturnType<typeof startDeliveryQueueWorker> | undefined;
  let sweep: OverdueSweep | undefined;
  let schedule: ScheduleDeliveries;
  const deliveryQueue = deps.deliveryQueue;
  if (deliveryQueue && workerConnection) {
    deliveryWorker = startDeliveryQueueWorker({ ...deliveryDeps, connection: workerConnection, prefix: deps.config.queuePrefix });
    sweep = new OverdueSweep(deps.sql, deliveryQueue, deliveryDeps.policy, deliveryDeps.logger);
    sweep.start();
    schedule = (ids) => enqueueDeliveries(deliveryQueue, ids, delivery.maxAttempts);
  } else {
    const poller = new DeliveryPoller(deliveryDeps);
    poller.start();
    deliveryPoller = poller;
    schedule = async () => poller.kick();
  }
  const dispatcher = new NotificationDispatcher(deps.sql, schedule, deps.logger.child({ component: 'notifications' }));
  dispatcher.start();

  const dataRights = new DataRightsWorker({
    sql: deps.sql,
    clickhouse: { client: deps.clickhouse, cluster: deps.config.clickhouseCluster },
    queueSettled: queue ? ingestQueueSettled(queue) : (before) => deps.eventSink.settledBefore?.(before) ?? Promise.resolve(true),
    purgeIngestLog: deps.eventSink.purgeShipped ? () => deps.eventSink.purgeShipped?.() ?? Promise.resolve() : undefined,
    logger: deps.logger.child({ component: 'data-rights' }),
  });
  dataRights.start();
  const changelog = new ChangelogScheduler(deps.sql, deps.logger.child({ component: 'changelog' }));
  changelog.start();
  const trackerInbound = new TrackerInboundWorker(deps.sql, deps.logger.child({ component: 'tracker-inbound' }));
  trackerInbound.start();
  const alerts = new AlertEvaluator(deps.sql, deps.clickhouse, deps.logger.child({ component: 'alerts' }));
  alerts.start();
  const digest = new DigestScheduler(deps.sql, deps.clickhouse, deps.logger.child({ component: 'digest' }));
  digest.start();

  return {
    relay,
    dispatcher,
    deliveryPoller,
    deliveryWorker,
    deliveryDeps,
    ingestWorker,
    dataRights,
    changelog,
    trackerInbound,
    alerts,
    digest,
    async stop() {
      await trackerInbound.stop();
      await digest.stop();
      await alerts.stop();
      await changelog.stop();
      await dataRights.stop();
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
