export type MicroBatcherOptions<T, R> = {
  /** Flush as soon as this many items are waiting. */
  maxItems: number;
  /**
   * Flush at the latest this long after the first waiting item arrived. 0: at the end of the
   * current event-loop turn (setImmediate), so the items of every request read in this turn go
   * together without waiting for a timer.
   */
  maxDelayMs: number;
  /** Flushes allowed to run at once; items arriving meanwhile wait and form the next batch. */
  maxConcurrentFlushes: number;
  /**
   * A flush starts at least this long after the previous one started (default 0: at once). Items
   * arriving meanwhile wait, so under load each flush carries about this long of traffic.
   */
  minFlushIntervalMs?: number;
  /**
   * Flush as soon as this many callers are waiting, minFlushIntervalMs or not (default: no such
   * bound). For callers that cannot be more than so many at once, such as the jobs a BullMQ worker
   * holds: once all are here, waiting longer only stalls them.
   */
  maxWaiting?: number;
  flush: (items: T[]) => Promise<R>;
};

type Waiter<R> = { resolve: (result: R) => void; reject: (error: unknown) => void };

/**
 * Coalesces the items of concurrent callers into one flush. Each caller's items stay together
 * in one flush (a request is never split), and each caller gets that flush's result or error.
 * While the allowed flushes are busy, items queue up, so batches grow with load.
 */
export class MicroBatcher<T, R> {
  #items: T[] = [];
  #waiters: Waiter<R>[] = [];
  #timer: { cancel: () => void } | undefined;
  #inFlight = new Set<Promise<unknown>>();
  #lastFlushAt = Number.NEGATIVE_INFINITY;
  #draining = false;

  constructor(private readonly options: MicroBatcherOptions<T, R>) {}

  /** Number of items waiting for a flush (not counting those being flushed). */
  get pending(): number {
    return this.#items.length;
  }

  add(items: T[]): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#items.push(...items);
      this.#waiters.push({ resolve, reject });
      if (this.#full()) this.#flushNow();
      else this.#timer ??= this.#later(this.options.maxDelayMs);
    });
  }

  /** Flushes everything waiting and resolves when no flush is running any more. */
  async drain(): Promise<void> {
    this.#draining = true;
    while (this.#items.length > 0 || this.#inFlight.size > 0) {
      this.#flushNow();
      await Promise.allSettled([...this.#inFlight]);
    }
  }

  #full(): boolean {
    return this.#items.length >= this.options.maxItems || this.#waiters.length >= (this.options.maxWaiting ?? Number.POSITIVE_INFINITY);
  }

  /** Calls #flushNow after `ms`, or at the end of this event-loop turn when `ms` is 0. */
  #later(ms: number): { cancel: () => void } {
    if (ms > 0) {
      const timeout = setTimeout(() => this.#flushNow(), ms);
      return { cancel: () => clearTimeout(timeout) };
    }
    const immediate = setImmediate(() => this.#flushNow());
    return { cancel: () => clearImmediate(immediate) };
  }

  #flushNow(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#items.length === 0 || this.#inFlight.size >= this.options.maxConcurrentFlushes) return;
    const wait = this.#lastFlushAt + (this.options.minFlushIntervalMs ?? 0) - performance.now();
    if (wait > 0 && !this.#draining && !this.#full()) {
      this.#timer = this.#later(wait);
      return;
    }
    this.#lastFlushAt = performance.now();
    const items = this.#items;
    const waiters = this.#waiters;
    this.#items = [];
    this.#waiters = [];
    const run = this.options.flush(items).then(
      (result) => {
        for (const waiter of waiters) waiter.resolve(result);
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
      },
    );
    this.#inFlight.add(run);
    void run.finally(() => {
      this.#inFlight.delete(run);
      // Items that arrived while the flushes were busy have waited long enough.
      if (this.#items.length > 0) this.#flushNow();
    });
  }
}
