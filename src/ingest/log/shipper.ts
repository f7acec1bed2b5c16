import type { Logger } from '../../core/logger.js';
import type { EventWriter } from '../writer/event-writer.js';
import { type Checkpoint, type CheckpointStore, rangeToken } from './checkpoint.js';
import type { ClientIdIndex } from './client-ids.js';
import type { Frame } from './frame.js';
import { logBatch } from './log-lines.js';
import type { SegmentLog } from './segment-log.js';

export type ShipperOptions = {
  /**
   * Under load, at most one insert per this long, so inserts stay large (a chDB insert costs
   * 20-60 ms whatever its size, BENCHMARKS.md). An idle log ships at once when events arrive.
   */
  intervalMs: number;
  /** Most bytes of log one insert carries (about 3,000 events a MiB). */
  maxBatchBytes: number;
  /** First wait after a failed insert; doubled after each further failure up to maxBackoffMs. */
  backoffMs: number;
  maxBackoffMs: number;
};

/**
 * A burst that has ended ships at once instead of at the next interval: once no frame has been
 * appended for QUIET_MS, and at least EARLY_SHIP_BYTES wait (an insert of about 600 events or
 * more, worth its fixed cost). A trickle below that still waits for the interval, so it does not
 * turn into one small insert per request.
 */
const QUIET_MS = 25;
const EARLY_SHIP_BYTES = 256 * 1024;

export type ShippedBatch = { from: number; to: number; events: number; insertMs: number; frames: Frame[]; shippedAt: number };

/**
 * Moves the ingest log to ClickHouse through EventWriter, in large inserts, exactly once:
 *
 *   1. the range [from, to) of the next insert is recorded in the checkpoint (durable);
 *   2. its events are inserted with a deduplication token made of the log id and that range;
 *   3. the client eventIds of the range are recorded as shipped, then the checkpoint moves to
 *      `to` (durable), then segments wholly before it are removed.
 *
 * A crash after 1 makes the next start insert exactly that range again under the same token:
 * if the first insert landed, ClickHouse drops the second (non_replicated_deduplication_window
 * on the events table). A failed insert is retried, the same range and token, with backoff,
 * for as long as it takes: the API keeps acknowledging into the log until its bound.
 */
export class Shipper {
  #checkpoint: Checkpoint;
  #loop: Promise<void> | undefined;
  #wakeOnData: (() => void) | undefined;
  #wakeOnStop: (() => void) | undefined;
  #draining = false;
  #stopping = false;
  #lastInsertAt = Number.NEGATIVE_INFINITY;
  #lastDataAt = Number.NEGATIVE_INFINITY;
  #failures = 0;
  /**
   * The range whose earlier insert may have landed, whole or in part: the one in flight when the
   * process stopped, or one whose insert failed (its answer may be what was lost). Its insert is
   * then made with the writer's `checkAll`, as a BullMQ job run again is.
   */
  #uncertain: { from: number; to: number } | null;

  constructor(
    private readonly deps: {
      log: SegmentLog;
      store: CheckpointStore;
      checkpoint: Checkpoint;
      index: ClientIdIndex;
      writer: EventWriter;
      logger: Logger;
      onShipped?: (batch: ShippedBatch) => void;
    },
    private readonly options: ShipperOptions,
  ) {
    this.#checkpoint = deps.checkpoint;
    this.#uncertain = deps.checkpoint.shipping ?? null;
  }

  /** Every frame before this position is in ClickHouse. */
  get shipped(): number {
    return this.#checkpoint.shipped;
  }

  /** Consecutive failed inserts (0 while ClickHouse takes them). */
  get failures(): number {
    return this.#failures;
  }

  start(): void {
    this.#loop ??= (async () => {
      while (!this.#stopping) {
        try {
          await this.#run();
        } catch (error) {
          // Only the log itself failing (reading a segment, writing the checkpoint) ends up
          // here; failed inserts are retried inside. Start over from the durable checkpoint.
          this.deps.logger.error({ err: error }, 'ingest log shipper failed, restarting in 5 s');
          await this.#pause(5_000);
        }
      }
    })();
  }

  /** New frames are durable: ship them (at once when idle, else at the next interval). */
  notify(): void {
    this.#lastDataAt = performance.now();
    this.#wakeOnData?.();
  }

  /**
   * Ships what it can within `boundMs`, then stops (after the insert in progress: a chDB insert
   * cannot be cancelled). What is left stays in the log for the next start.
   */
  async stop(boundMs: number): Promise<void> {
    if (!this.#loop) return;
    this.#draining = true;
    this.#wakeOnStop?.();
    const deadline = setTimeout(() => {
      this.#stopping = true;
      this.#wakeOnStop?.();
    }, boundMs);
    const caughtUp = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        const caughtUp = this.#checkpoint.shipped >= this.deps.log.end && !this.#checkpoint.shipping;
        if (caughtUp || this.#stopping) {
          clearInterval(check);
          resolve();
        }
      }, 10);
    });
    await caughtUp;
    clearTimeout(deadline);
    this.#stopping = true;
    this.#wakeOnStop?.();
    await this.#loop;
  }

  /**
   * Resolves after `ms`, or earlier when the shipper is asked to stop; with `untilData` also on
   * notify(). Only the idle wait listens to new data: a wait for the interval or after a failure
   * must not end with every request that arrives.
   */
  #pause(ms: number, untilData = false): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === Number.POSITIVE_INFINITY ? undefined : setTimeout(done, ms);
      const self = this;
      function done() {
        if (timer) clearTimeout(timer);
        if (self.#wakeOnData === done) self.#wakeOnData = undefined;
        if (self.#wakeOnStop === done) self.#wakeOnStop = undefined;
        resolve();
      }
      this.#wakeOnStop = done;
      if (untilData) this.#wakeOnData = done;
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopping) {
      const pending = this.#checkpoint.shipping;
      if (pending) {
        await this.#ship(pending.from, pending.to);
        continue;
      }
      const from = this.#checkpoint.shipped;
      const unshipped = this.deps.log.end - from;
      if (unshipped <= 0) {
        await this.#pause(Number.POSITIVE_INFINITY, true);
        continue;
      }
      const now = performance.now();
      const wait = this.#lastInsertAt + this.options.intervalMs - now;
      const burstEnded = unshipped >= EARLY_SHIP_BYTES && now - this.#lastDataAt >= QUIET_MS;
      if (wait > 0 && !this.#draining && unshipped < this.options.maxBatchBytes && !burstEnded) {
        // Looked at again every QUIET_MS: the burst may end before the interval does.
        await this.#pause(Math.min(wait, QUIET_MS));
        continue;
      }
      // `start` is past `from` only at a segment whose end recovery found damaged.
      const { start, end } = await this.deps.log.read(from, this.options.maxBatchBytes);
      if (end <= start) {
        await this.#pause(Number.POSITIVE_INFINITY, true);
        continue;
      }
      await this.#save({ ...this.#checkpoint, shipping: { from: start, to: end } });
      await this.#ship(start, end);
    }
  }

  async #save(checkpoint: Checkpoint): Promise<void> {
    await this.deps.store.save(checkpoint);
    this.#checkpoint = checkpoint;
  }

  /** Inserts exactly [from, to), retrying until it succeeds or the shipper stops. */
  async #ship(from: number, to: number): Promise<void> {
    const { frames, start, end } = await this.deps.log.read(from, to - from);
    if (start !== from || end !== to) throw new Error(`ingest log: range ${from}-${to} does not end on a frame boundary (read to ${end})`);
    // The range as the insert's own bytes: no parse, no re-encode (log-lines.ts).
    const batch = logBatch(frames);
    const token = rangeToken(this.#checkpoint.logId, from, to);
    for (;;) {
      if (this.#stopping) return;
      const started = performance.now();
      this.#lastInsertAt = started;
      try {
        // A range inserted before may have been cut between its parts by a crash (events stored,
        // their index rows or rollups not): the writer then finds what is stored by its own
        // created_at, writes only the rest and makes the dependents whole (EventWriter.write).
        // Sent again as they are, the cut could stay: client eventIds found in the index are
        // dropped from the block, and a block taken for a repeat is dropped with its views'.
        const uncertain = this.#uncertain !== null && this.#uncertain.from === from && this.#uncertain.to === to;
        const options = uncertain ? { checkAll: true } : {};
        const { repaired } = batch.rows
          ? await this.deps.writer.writeRowLines(batch.rows, token, options)
          : await this.deps.writer.write(batch.events, token, options);
        if (repaired && (repaired.indexRows > 0 || repaired.rollupDays > 0 || repaired.userOrderedRows > 0)) {
          this.deps.logger.warn({ from, to, repaired }, 'ingest log: an insert cut by a crash was made whole');
        }
      } catch (error) {
        this.#uncertain = { from, to };
        this.#failures++;
        const backoff = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** Math.min(this.#failures - 1, 16));
        this.deps.logger.warn(
          { err: error, from, to, events: batch.count, failures: this.#failures, retryInMs: backoff },
          'ingest log: insert failed, retrying',
        );
        await this.#pause(backoff);
        continue;
      }
      const insertMs = performance.now() - started;
      if (this.#failures > 0) this.deps.logger.info({ failures: this.#failures }, 'ingest log: inserts succeed again');
      this.#failures = 0;
      this.#uncertain = null;
      await this.deps.index.markShipped(batch.clientIds);
      await this.#save({ ...this.#checkpoint, shipped: to, shipping: null });
      await this.deps.log.removeBefore(to);
      this.deps.onShipped?.({ from, to, events: batch.count, insertMs, frames, shippedAt: Date.now() });
      return;
    }
  }
}
