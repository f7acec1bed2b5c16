import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';

/** Deliveries have a queue of their own: a slow webhook never holds up ClickHouse writes. */
export const DELIVERIES_QUEUE = 'deliveries';

export type DeliveryJobData = { deliveryId: string };

/** Name of the backoff strategy of deliveries.worker.ts: the delay the failed attempt asked for. */
export const DELIVERY_BACKOFF = 'delivery';

/**
 * Job options of a delivery. The job id is the delivery id, so adding the job of a delivery that
 * is already queued (the dispatcher and the overdue sweep, an operator's retry) adds nothing.
 * Retries are BullMQ's (the job is retried after the delay the attempt computed from the
 * delivery's own count); the deliveries row decides when to stop. Finished jobs are removed at
 * once: the row is the record, and a later retry must be able to add the same id again.
 */
export function deliveryJobOptions(deliveryId: string, maxAttempts: number): JobsOptions {
  return {
    jobId: deliveryId,
    attempts: maxAttempts,
    backoff: { type: DELIVERY_BACKOFF },
    removeOnComplete: true,
    removeOnFail: true,
  };
}

export function createDeliveryQueue(connection: Redis, prefix: string): Queue<DeliveryJobData> {
  return new Queue<DeliveryJobData>(DELIVERIES_QUEUE, { connection, prefix });
}

export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;

/** Queues deliveries by id (duplicates of queued ones are ignored by BullMQ). */
export async function enqueueDeliveries(queue: DeliveryQueue, ids: string[], maxAttempts: number): Promise<void> {
  if (ids.length === 0) return;
  await queue.addBulk(
    ids.map((deliveryId) => ({ name: 'deliver', data: { deliveryId }, opts: deliveryJobOptions(deliveryId, maxAttempts) })),
  );
}
