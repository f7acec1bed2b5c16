import type { Logger } from '../logger.js';
import type { Sql } from '../oltp/db.js';
import { dispatchNotifications } from '../oltp/notifications.repo.js';

/** Hands the deliveries a dispatch created to whatever sends them (the queue, or the poller). */
export type ScheduleDeliveries = (deliveryIds: string[]) => Promise<void>;

/**
 * Expands the notification outbox into deliveries (notifications.repo.ts), in id order, as
 * batches commit; then schedules their first attempt. Runs in every worker process: `skip
 * locked` splits the work. Should scheduling fail after the commit, the deliveries are still
 * pending in PostgreSQL, where the poller (or, with Redis, the overdue sweep) finds them.
 */
export class NotificationDispatcher {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly schedule: ScheduleDeliveries,
    private readonly logger: Logger,
    private readonly options: { intervalMs?: number; batchSize?: number } = {},
  ) {}

  start(): void {
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Dispatches until no notification is left; returns how many were expanded. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const { notifications, deliveryIds } = await dispatchNotifications(this.sql, this.options.batchSize ?? 100);
      if (notifications === 0) return total;
      total += notifications;
      await this.schedule(deliveryIds).catch((error: unknown) =>
        this.logger.warn({ err: error, deliveries: deliveryIds.length }, 'could not schedule new deliveries; the sweep will'),
      );
    }
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.drain()
        .then(
          () => this.#schedule(this.options.intervalMs ?? 200),
          (error: unknown) => {
            this.logger.warn({ err: error }, 'notification dispatch failed, will retry');
            this.#schedule(Math.max(1_000, this.options.intervalMs ?? 200));
          },
        )
        .finally(() => {
          this.#running = undefined;
        });
    }, delayMs);
  }
}
