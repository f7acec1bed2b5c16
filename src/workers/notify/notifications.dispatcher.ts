import type { Logger } from '../../core/logger.js';
import type { Sql } from '../../oltp/db.js';
import { dispatchNotifications, pruneSettledNotifications } from '../../oltp/notifications.repo.js';
import { DrainLoop } from '../drain-loop.js';

/** Hands the deliveries a dispatch created to whatever sends them (the queue, or the poller). */
export type ScheduleDeliveries = (deliveryIds: string[]) => Promise<void>;

/**
 * Expands the notification outbox into deliveries (notifications.repo.ts), in id order, as
 * batches commit; then schedules their first attempt. Runs in every worker process: `skip
 * locked` splits the work. Should scheduling fail after the commit, the deliveries are still
 * pending in PostgreSQL, where the poller (or, with Redis, the overdue sweep) finds them.
 */
export class NotificationDispatcher {
  readonly #loop: DrainLoop;
  #stopping = false;

  constructor(
    private readonly sql: Sql,
    private readonly schedule: ScheduleDeliveries,
    private readonly logger: Logger,
    private readonly options: {
      intervalMs?: number;
      batchSize?: number;
      /** Days a settled notification and its deliveries are kept after dispatch. */
      retentionDays?: number;
      /** Time between two prunes of settled notifications. */
      pruneEveryMs?: number;
    } = {},
  ) {
    this.#loop = new DrainLoop(() => this.drain(), logger, {
      intervalMs: options.intervalMs ?? 200,
      failure: 'notification dispatch failed, will retry',
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Waits for the batch in progress only: other processes may keep the outbox from emptying. */
  stop(): Promise<void> {
    this.#stopping = true;
    return this.#loop.stop();
  }

  #lastPrune = Number.NEGATIVE_INFINITY;

  /** Dispatches until no notification is left (or stop); returns how many were expanded. */
  async drain(): Promise<number> {
    await this.pruneWhenDue();
    let total = 0;
    while (!this.#stopping) {
      const { notifications, deliveryIds } = await dispatchNotifications(this.sql, this.options.batchSize ?? 100);
      if (notifications === 0) return total;
      total += notifications;
      await this.schedule(deliveryIds).catch((error: unknown) =>
        this.logger.warn({ err: error, deliveries: deliveryIds.length }, 'could not schedule new deliveries; the sweep will'),
      );
    }
    return total;
  }

  /** Applies the retention rule (pruneSettledNotifications) at most once per pruneEveryMs. */
  private async pruneWhenDue(): Promise<void> {
    const now = Date.now();
    if (now - this.#lastPrune < (this.options.pruneEveryMs ?? 10 * 60_000)) return;
    this.#lastPrune = now;
    const retentionDays = this.options.retentionDays ?? NOTIFICATION_RETENTION_DAYS;
    let deleted = 0;
    while (!this.#stopping) {
      const batch = await pruneSettledNotifications(this.sql, retentionDays, 1_000);
      deleted += batch;
      if (batch === 0) break;
    }
    if (deleted > 0) this.logger.info({ deleted, retentionDays }, 'pruned settled notifications');
  }
}

/** Days a settled notification, with its deliveries, is kept after dispatch (docs/notifications.md). */
export const NOTIFICATION_RETENTION_DAYS = 30;
