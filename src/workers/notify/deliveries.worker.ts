import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../../core/logger.js';
import type { Sql } from '../../oltp/db.js';
import {
  type ClaimedDelivery,
  claimDelivery,
  claimDueDeliveries,
  markAttemptFailed,
  markDeferred,
  markDelivered,
  overdueDeliveryIds,
} from '../../oltp/deliveries.repo.js';
import { DELIVERIES_QUEUE, type DeliveryJobData, type DeliveryQueue, enqueueDeliveries } from './deliveries.queue.js';
import { DeliveryError } from './errors.js';
import { type SenderDeps, sendDelivery } from './sender.js';

export type DeliveryPolicy = {
  maxAttempts: number;
  timeoutMs: number;
  /** Delay after the first failed attempt; doubled after each further one. */
  backoffMs: number;
};

export type DeliveryDeps = { sql: Sql; sender: SenderDeps; policy: DeliveryPolicy; logger: Logger };

/** Longest wait between two attempts, whatever the base and the count. */
const MAX_BACKOFF_MS = 24 * 3600 * 1000;

/** Wait after the `attempts`-th failed attempt: base, 2×base, 4×base … */
export const backoffAfter = (policy: DeliveryPolicy, attempts: number) =>
  Math.min(MAX_BACKOFF_MS, policy.backoffMs * 2 ** Math.max(0, attempts - 1));

/**
 * How long a claim keeps other workers off a delivery: well past one attempt's timeout, so only
 * a worker that died mid-attempt loses its claim.
 */
export const leaseMs = (policy: DeliveryPolicy) => 2 * policy.timeoutMs + 30_000;

export type AttemptResult = { kind: 'delivered' } | { kind: 'retry'; delayMs: number; error: string } | { kind: 'failed'; error: string };

/**
 * One attempt at a claimed delivery, and its outcome written to the row. A delivery the plan or
 * the recipient no longer allows (see `refusal`) fails for good without being sent. The outcome
 * is written only while this claim still holds the row; a worker that lost its claim (its lease
 * expired and another worker took the row) logs it and writes nothing.
 */
export async function attemptDelivery(deps: DeliveryDeps, delivery: ClaimedDelivery): Promise<AttemptResult> {
  const { policy, logger } = deps;
  const log = { deliveryId: delivery.id, channel: delivery.channel, attempts: delivery.attempts };
  const lostClaim = (outcome: string) =>
    logger.warn({ ...log, outcome }, 'delivery claim lost before its outcome was recorded (lease expired); the other claim decides');
  try {
    if (delivery.refusal) throw new DeliveryError(delivery.refusal, true);
    await sendDelivery(deps.sender, delivery);
  } catch (error) {
    const failure = error instanceof DeliveryError ? error : new DeliveryError(String((error as Error)?.message ?? error), false);
    if (failure.later.deferred && failure.later.retryAfterMs !== undefined) {
      // Put off, not failed: the attempt is given back.
      const delayMs = failure.later.retryAfterMs;
      if (!(await markDeferred(deps.sql, delivery, failure.message, delayMs))) lostClaim(`deferred: ${failure.message}`);
      logger.debug({ ...log, reason: failure.message, retryInMs: delayMs }, 'delivery put off');
      return { kind: 'retry', delayMs, error: failure.message };
    }
    const retry = !failure.permanent && delivery.attempts < policy.maxAttempts;
    // A receiver's Retry-After (a tracker's rate limit) is honoured: the next attempt waits until then.
    const delayMs = retry ? (failure.later.retryAfterMs ?? backoffAfter(policy, delivery.attempts)) : null;
    if (!(await markAttemptFailed(deps.sql, delivery, failure.message, delayMs))) lostClaim(`failed: ${failure.message}`);
    if (delayMs === null) {
      logger.warn({ ...log, error: failure.message }, 'delivery failed for good; listed as failed for an operator to retry');
      return { kind: 'failed', error: failure.message };
    }
    logger.info({ ...log, error: failure.message, retryInMs: delayMs }, 'delivery attempt failed, will retry');
    return { kind: 'retry', delayMs, error: failure.message };
  }
  if (!(await markDelivered(deps.sql, delivery))) lostClaim('delivered');
  logger.debug(log, 'delivered');
  return { kind: 'delivered' };
}

/** Claims and attempts one delivery by id; null when it is not pending or another worker holds it. */
export async function runDelivery(deps: DeliveryDeps, id: string): Promise<AttemptResult | null> {
  const claimed = await claimDelivery(deps.sql, id, leaseMs(deps.policy));
  return claimed ? attemptDelivery(deps, claimed) : null;
}

/** Thrown to BullMQ for an attempt to retry: carries the delay the backoff strategy returns. */
class RetryLater extends Error {
  constructor(
    message: string,
    readonly delayMs: number,
  ) {
    super(message);
  }
}

/**
 * With Redis: the BullMQ worker of the deliveries queue. A job that finds its delivery delivered,
 * failed or held by another worker ends without sending; an attempt to retry is thrown back to
 * BullMQ with its delay.
 */
export function startDeliveryQueueWorker(deps: DeliveryDeps & { connection: Redis; prefix: string; concurrency?: number }) {
  const worker = new Worker<DeliveryJobData>(
    DELIVERIES_QUEUE,
    async (job) => {
      const result = await runDelivery(deps, job.data.deliveryId);
      if (result?.kind === 'retry') throw new RetryLater(result.error, result.delayMs);
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency: deps.concurrency ?? 16,
      lockDuration: leaseMs(deps.policy),
      settings: {
        backoffStrategy: (attemptsMade, _type, error) =>
          error instanceof RetryLater ? error.delayMs : backoffAfter(deps.policy, attemptsMade),
      },
    },
  );
  worker.on('error', (error) => deps.logger.error({ err: error }, 'delivery worker error'));
  return worker;
}

/**
 * With Redis: finds pending deliveries long past due that no job seems to carry (the process
 * died between dispatching and queueing them, or a job was removed) and queues them again; a
 * delivery whose job is still queued is not duplicated (job id = delivery id).
 */
export class OverdueSweep {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly queue: DeliveryQueue,
    private readonly policy: DeliveryPolicy,
    private readonly logger: Logger,
    private readonly options: { intervalMs?: number; graceMs?: number } = {},
  ) {}

  start(): void {
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.sweep()
        .then(() => undefined)
        .catch((error: unknown) => this.logger.warn({ err: error }, 'overdue delivery sweep failed'))
        .finally(() => {
          this.#running = undefined;
        });
    }, this.options.intervalMs ?? 30_000);
  }

  async sweep(): Promise<number> {
    const ids = await overdueDeliveryIds(this.sql, this.options.graceMs ?? 60_000, 1_000);
    await enqueueDeliveries(this.queue, ids, this.policy.maxAttempts);
    return ids.length;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}

/**
 * Without Redis: polls `deliveries` for pending rows that are due and attempts them, up to
 * `concurrency` at once. Several processes may poll the same table: claiming is atomic.
 */
export class DeliveryPoller {
  #timer: NodeJS.Timeout | undefined;
  #inFlight = new Set<Promise<unknown>>();
  #claiming: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly deps: DeliveryDeps,
    private readonly options: { intervalMs?: number; concurrency?: number } = {},
  ) {}

  start(): void {
    this.#schedule(0);
  }

  /** Looks for work now (new deliveries were dispatched) instead of at the next tick. */
  kick(): void {
    if (this.#stopped) return;
    this.#schedule(0);
  }

  /** Stops claiming; waits for the attempts in progress (each bounded by the timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#claiming;
    await Promise.allSettled([...this.#inFlight]);
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#tick(), delayMs);
  }

  async #tick(): Promise<void> {
    if (this.#claiming || this.#stopped) return;
    const free = (this.options.concurrency ?? 16) - this.#inFlight.size;
    let claimedAll = false;
    this.#claiming = (async () => {
      if (free <= 0) return;
      const claimed = await claimDueDeliveries(this.deps.sql, free, leaseMs(this.deps.policy));
      claimedAll = claimed.length === free;
      for (const delivery of claimed) {
        const attempt = attemptDelivery(this.deps, delivery)
          .then((result) => {
            // Look again when the retry is due rather than at the next tick (short backoffs).
            if (result.kind === 'retry' && result.delayMs < (this.options.intervalMs ?? 500)) {
              setTimeout(() => this.kick(), result.delayMs).unref();
            }
          })
          .catch((error: unknown) => this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'delivery attempt crashed'))
          .finally(() => {
            this.#inFlight.delete(attempt);
            this.kick(); // a slot is free: more may be due
          });
        this.#inFlight.add(attempt);
      }
    })()
      .catch((error: unknown) => this.deps.logger.warn({ err: error }, 'delivery poll failed'))
      .finally(() => {
        this.#claiming = undefined;
      });
    await this.#claiming;
    // A full batch may have left more due rows behind.
    this.#schedule(claimedAll ? 0 : (this.options.intervalMs ?? 500));
  }
}
