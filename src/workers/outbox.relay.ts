import { uuidv7 } from 'uuidv7';
import type { FactRow } from '../core/fact.js';
import type { Logger } from '../core/logger.js';
import type { Sql } from '../oltp/db.js';
import { claimOutboxBatch, deleteOutboxBatch } from '../oltp/outbox.repo.js';
import { DrainLoop } from './drain-loop.js';

/** Delivers one claimed batch; `batchId` is stable across redeliveries of the same batch. */
export type FactDelivery = (facts: FactRow[], batchId: string) => Promise<void>;

/** Arbitrary constant: the advisory lock that keeps one relay at work across processes. */
const RELAY_LOCK_KEY = 7_202_611_221;

/**
 * Moves outbox facts to ClickHouse (directly, or as queue jobs), in id order, at least once;
 * the batch id becomes the deduplication token (or job id), so a batch delivered again after a
 * crash is stored once. A session advisory lock lets only one relay of all processes work at a
 * time, which keeps the order.
 */
export class OutboxRelay {
  readonly #loop: DrainLoop;

  constructor(
    private readonly sql: Sql,
    private readonly deliver: FactDelivery,
    logger: Logger,
    private readonly options: { intervalMs?: number; batchSize?: number } = {},
  ) {
    this.#loop = new DrainLoop(() => this.drain(), logger, {
      intervalMs: options.intervalMs ?? 200,
      failure: 'outbox relay: delivery failed, will retry',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Relays until the outbox is empty (or another process holds the relay lock). */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const moved = await this.step();
      if (moved === 0) return total;
      total += moved;
    }
  }

  /** Delivers one batch; returns how many facts moved (0: none, or another relay is at work). */
  async step(): Promise<number> {
    const connection = await this.sql.reserve();
    try {
      const [lock] = await connection<{ locked: boolean }[]>`select pg_try_advisory_lock(${RELAY_LOCK_KEY}) as locked`;
      if (!lock?.locked) return 0;
      try {
        const batch = await claimOutboxBatch(connection, uuidv7(), this.options.batchSize ?? 5_000);
        if (batch.facts.length === 0) return 0;
        await this.deliver(batch.facts, batch.batchId);
        await deleteOutboxBatch(connection, batch.batchId);
        return batch.facts.length;
      } finally {
        await connection`select pg_advisory_unlock(${RELAY_LOCK_KEY})`;
      }
    } finally {
      connection.release();
    }
  }
}
