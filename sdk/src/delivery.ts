import type { BatchResult } from './api-types.js';
import { fullJitterDelay } from './backoff.js';
import type { DropReporter } from './drops.js';
import { FeedbackApiError, isRetryable } from './errors.js';
import type { EventQueue, QueuedEvent } from './queue.js';
import type { Request } from './transport.js';

export type DeliveryOptions = {
  /** Events in one request at most (the server takes up to 1,000). */
  maxBatchSize: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** The device's clock, for the batch's sentAt. */
  now: () => number;
  debug: (message: string, details?: unknown) => void;
  onRejected: (event: QueuedEvent, reason: string) => void;
  /** A failed attempt that will be retried (drops go through `drops`). */
  onError: (error: unknown) => void;
  drops: DropReporter;
};

export type DeliveryStats = { delivered: number; duplicates: number; rejected: number; discarded: number };

/** fetch keepalive refuses bodies over 64 KiB in total in flight; a little room for the envelope. */
const KEEPALIVE_MAX_BYTES = 60_000;

/**
 * Moves the queue to POST /events/batch, one request at a time, oldest events first, so a user's
 * events arrive in the order tracked. Network errors, 5xx, 408 and 429 keep the batch and retry it
 * after a full-jitter backoff, at least as long as Retry-After says; a 413 halves the batch;
 * events the server rejects are reported and dropped, never sent again; any other refusal (a
 * wrong key, say) drops the batch and reports it, since sending it again cannot succeed.
 */
export class Delivery {
  /** The drain running, if any: batch after batch until the queue is empty. */
  private draining: Promise<void> | undefined;
  /** The keepalive request of a page going away, if one is out (it never rejects). */
  private unloadSend: Promise<void> | undefined;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** Shrinks on 413, grows back after each success. */
  private batchSize: number;
  readonly stats: DeliveryStats = { delivered: 0, duplicates: 0, rejected: 0, discarded: 0 };

  constructor(
    private readonly queue: EventQueue,
    private readonly request: Request,
    private readonly options: DeliveryOptions,
  ) {
    this.batchSize = options.maxBatchSize;
  }

  /** Whether a retry is waiting for its backoff to pass (new events then wait too). */
  get backingOff(): boolean {
    return this.retryTimer !== undefined;
  }

  get busy(): boolean {
    return this.draining !== undefined || this.unloadSend !== undefined;
  }

  /**
   * Sends until the queue is empty. Rejects with the failure when a retryable one stopped it (the
   * events stay queued and a retry is scheduled). Joins the drain already running, if any.
   */
  flush(): Promise<void> {
    this.draining ??= (async () => {
      await this.unloadSend; // one request at a time, the page's last one included
      await this.drain();
    })().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  /** Stops the scheduled retry, if any (shutdown). */
  cancelRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
  }

  /**
   * The page is going away: one keepalive request with what fits, when none is in flight (one
   * request at a time holds even now). Whatever it carries stays queued, and stored, until
   * answered: if the page dies first, the next load sends it again, and the eventIds make that a
   * duplicate, not a second copy.
   */
  flushForUnload(): void {
    if (this.busy || this.queue.length === 0) return;
    let batch = this.queue.head(this.batchSize);
    while (batch.length > 1 && JSON.stringify(batch).length > KEEPALIVE_MAX_BYTES) batch = batch.slice(0, Math.ceil(batch.length / 2));
    this.cancelRetry();
    this.unloadSend = this.send(batch, true)
      .catch((error) => void this.failed(error, batch))
      .finally(() => {
        this.unloadSend = undefined;
      });
  }

  private async drain(): Promise<void> {
    this.cancelRetry();
    while (this.queue.length > 0) {
      const batch = this.queue.head(this.batchSize);
      try {
        await this.send(batch, false);
      } catch (error) {
        if (this.failed(error, batch)) throw error;
      }
    }
  }

  private async send(batch: QueuedEvent[], keepalive: boolean): Promise<void> {
    const body = { sentAt: new Date(this.options.now()).toISOString(), events: batch };
    // A keepalive body is sent plain: gzip is asynchronous, and the page may be gone by then.
    const result = await this.request<BatchResult>('POST', '/events/batch', { body, gzip: !keepalive, keepalive });
    this.attempt = 0;
    this.batchSize = Math.min(this.options.maxBatchSize, this.batchSize * 2);
    this.settle(batch, result);
  }

  /** Counts and reports what became of each event, then removes the batch from the queue. */
  private settle(batch: QueuedEvent[], result: BatchResult | undefined): void {
    const results = result?.results;
    const rejected: string[] = [];
    batch.forEach((event, i) => {
      const outcome = results?.[i];
      if (outcome?.status === 'rejected') {
        this.stats.rejected++;
        rejected.push(event.eventId);
        this.options.debug(`event ${event.eventId} (${event.eventName}) rejected: ${outcome.reason}`, event);
        this.options.onRejected(event, outcome.reason);
      } else if (outcome?.status === 'duplicate') this.stats.duplicates++;
      // A server without per-event results answers a 200 only when it took the whole batch.
      else this.stats.delivered++;
    });
    this.queue.remove(batch);
    this.options.drops.drop('REJECTED', rejected);
  }

  /** Handles a failed send; true when the events stay queued for a scheduled retry. */
  private failed(error: unknown, batch: QueuedEvent[]): boolean {
    if (error instanceof FeedbackApiError && error.status === 413) {
      if (batch.length > 1) {
        this.batchSize = Math.ceil(batch.length / 2);
        this.options.debug(`413: batches of ${this.batchSize} from now`);
        return false;
      }
      // One event alone is over the limit: no split helps.
      this.dropBatch(batch.slice(0, 1), 'EVENT_TOO_LARGE', error);
      return false;
    }
    if (isRetryable(error)) {
      const backoff = fullJitterDelay(this.attempt++, this.options.retryBaseMs, this.options.retryMaxMs);
      const delay = Math.max(backoff, (error as { retryAfterMs?: number }).retryAfterMs ?? 0);
      this.options.debug(`delivery failed, retry in ${delay} ms`, error);
      this.options.onError(error);
      this.cancelRetry();
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.flush().catch(() => undefined);
      }, delay);
      unref(this.retryTimer);
      return true;
    }
    this.dropBatch(batch, 'REFUSED', error);
    return false;
  }

  /** The service refused these events and a retry cannot succeed: counted, reported, removed. */
  private dropBatch(batch: QueuedEvent[], code: 'EVENT_TOO_LARGE' | 'REFUSED', error: unknown): void {
    this.stats.discarded += batch.length;
    this.queue.remove(batch);
    this.options.drops.drop(
      code,
      batch.map((event) => event.eventId),
      error,
    );
  }
}

/** A pending timer does not keep Node (or Deno, Bun) running: an app exits when its work is done. */
export function unref(timer: unknown): void {
  (timer as { unref?: () => void } | undefined)?.unref?.();
}
