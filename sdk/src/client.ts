import type { Comment, CommentBody, CreateFeedbackBody, Feedback, ListFeedbackQuery, SdkUser, Vote, VoteBody } from './api-types.js';
import { Delivery, type DeliveryStats, unref } from './delivery.js';
import { type DropCounts, DropReporter } from './drops.js';
import type { Lifecycle } from './lifecycle.js';
import { EventQueue, type QueuedEvent } from './queue.js';
import type { StorageAdapter } from './storage.js';
import { type Compressor, createTransport, type FetchLike, type Request } from './transport.js';
import { uuidv7 } from './uuidv7.js';

export type FeedbackOptions = {
  /** The project's API key (X-API-Key). */
  apiKey: string;
  /** The service's address, without /api/v1: `https://feedback.example.com`. */
  host: string;
  /** A flush starts when this many events are queued. Default 20. */
  flushAt?: number;
  /** …or this long after the last one, in ms. Default 10,000. */
  flushIntervalMs?: number;
  /** Events in one request at most. Default 1,000, what the service takes in one batch (a 413 halves it). */
  maxBatchSize?: number;
  /**
   * The queue's size at most (the length of its events' JSON); past it the oldest events are
   * dropped, counted and reported to onError. Default 64 MiB: a burst of 100,000 events of 600
   * bytes each. With storage, the queue is also bounded by what the storage holds.
   */
  maxQueueBytes?: number;
  /** Events queued at most, besides `maxQueueBytes`. Default: no count bound. */
  maxQueueSize?: number;
  /** First retry after up to this long, in ms, doubling per failure (full jitter). Default 1,000. */
  retryBaseMs?: number;
  /** Longest wait between retries, in ms. Default 300,000 (5 minutes). */
  retryMaxMs?: number;
  /** A request without an answer after this long is a network error, retried. Default 10,000 ms. */
  timeoutMs?: number;
  /** Gzip batches (CompressionStream, or zlib in Node). Default true. */
  gzip?: boolean;
  /** Where the queue survives restarts. Browser: localStorage; React Native: pass AsyncStorage; Node: memory. */
  storage?: StorageAdapter;
  /** The storage key of the queue. Default `feedback_queue`. */
  storageKey?: string;
  /** Sends on page hide or app background. Browser: pagehide/visibilitychange; React Native: appStateLifecycle(AppState). */
  lifecycle?: Lifecycle;
  /** The fetch to use. Default: the platform's. */
  fetch?: FetchLike;
  /** true logs to console.debug; a function receives every debug message. */
  debug?: boolean | ((message: string, details?: unknown) => void);
  /**
   * Node: when a process ends without shutdown() (its work done, nothing left on the event loop:
   * `beforeExit`), it waits this long at most for the queue to be delivered. Default 10,000 ms;
   * 0 turns it off. A process ended by a signal never gets there: call shutdown() on the signal.
   */
  exitTimeoutMs?: number;
  /** An event the server refused for its content (it is dropped, never sent again; onError hears of it too). */
  onRejected?: (event: QueuedEvent, reason: string) => void;
  /**
   * Events dropped, for any reason: a FeedbackDropError (`code`, `count`, `eventIds`). Also a
   * failed attempt that will be retried: a FeedbackNetworkError or FeedbackApiError (`isRetryable`).
   */
  onError?: (error: unknown) => void;
  /** The device's clock in ms (tests of clock skew). Default Date.now. */
  now?: () => number;
};

/** What the platform entry point (browser, Node, React Native) supplies. */
export type PlatformDefaults = {
  storage?: StorageAdapter;
  lifecycle?: Lifecycle;
  compress?: Compressor;
  /** Node: calls the handler when the process has nothing left to do (`beforeExit`); returns the unsubscribe. */
  beforeExit?: (handler: () => void) => () => void;
};

export type TrackOptions = { userId?: string; timestamp?: Date };

export type FeedbackStats = DeliveryStats & {
  /** Events waiting to be sent. */
  queued: number;
  /** Events dropped, for any reason (each was reported to onError): the sum of `droppedBy`. */
  dropped: number;
  /** Dropped events by reason (with storage, since the first start on it). */
  droppedBy: DropCounts;
};

/** The current user (identified, or the anonymous id) is kept beside the queue, so a reload keeps it. */
const USER_KEY_SUFFIX = '_user_id';

/**
 * The SDK: analytics events through a persisted, bounded queue delivered in batches (track,
 * flush, shutdown), the user (identify), and the feedback calls of SPEC part 4, which go out at
 * once and throw FeedbackApiError or FeedbackNetworkError.
 */
export class FeedbackClient {
  /** Resolves once the stored queue and user are read. */
  readonly ready: Promise<void>;
  private readonly request: Request;
  private readonly queue: EventQueue;
  private readonly delivery: Delivery;
  private readonly flushAt: number;
  private readonly now: () => number;
  private readonly debug: (message: string, details?: unknown) => void;
  private readonly storage: StorageAdapter | undefined;
  private readonly storageKey: string;
  private userId: string | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly flushIntervalMs: number;
  private unsubscribe: (() => void) | undefined;
  private unsubscribeExit: (() => void) | undefined;
  private readonly drops: DropReporter;
  private readonly exitTimeoutMs: number;
  /** When the process's end was first seen (beforeExit): delivery is tried until this plus exitTimeoutMs. */
  private exitDeadline: number | undefined;
  private exiting = false;
  private kicked = false;
  private closed = false;

  constructor(options: FeedbackOptions, platform: PlatformDefaults = {}) {
    if (!options.apiKey || !options.host) throw new Error('feedback SDK: init needs apiKey and host');
    const fetch = options.fetch ?? (globalThis as { fetch?: FetchLike }).fetch?.bind(globalThis);
    if (!fetch) throw new Error('feedback SDK: no fetch on this platform; pass options.fetch');
    this.now = options.now ?? Date.now;
    const debug = options.debug;
    this.debug =
      typeof debug === 'function' ? debug : debug ? (message, details) => console.debug('[feedback]', message, details ?? '') : () => {};
    this.request = createTransport({
      host: options.host,
      apiKey: options.apiKey,
      fetch,
      compress: options.gzip === false ? undefined : platform.compress,
      timeoutMs: options.timeoutMs ?? 10_000,
    });
    this.storage = options.storage ?? platform.storage;
    this.storageKey = options.storageKey ?? 'feedback_queue';
    const onError = options.onError ?? (() => {});
    this.drops = new DropReporter(onError, this.debug);
    this.queue = new EventQueue(
      this.storage,
      this.storageKey,
      { maxBytes: options.maxQueueBytes ?? 64 * 1024 * 1024, maxCount: options.maxQueueSize ?? Number.POSITIVE_INFINITY },
      this.drops,
      (error) => this.debug('storage failed; the queue is kept in memory', error),
    );
    this.delivery = new Delivery(this.queue, this.request, {
      maxBatchSize: options.maxBatchSize ?? 1000,
      retryBaseMs: options.retryBaseMs ?? 1000,
      retryMaxMs: options.retryMaxMs ?? 300_000,
      now: this.now,
      debug: this.debug,
      onRejected: options.onRejected ?? (() => {}),
      onError,
      drops: this.drops,
    });
    this.flushAt = options.flushAt ?? 20;
    this.flushIntervalMs = options.flushIntervalMs ?? 10_000;
    this.ready = this.restore();
    const lifecycle = options.lifecycle ?? platform.lifecycle;
    this.unsubscribe = lifecycle?.subscribe({
      background: (unloading) => this.background(unloading),
      foreground: () => this.kick(true),
    });
    this.exitTimeoutMs = options.exitTimeoutMs ?? 10_000;
    if (this.exitTimeoutMs > 0) this.unsubscribeExit = platform.beforeExit?.(() => this.beforeExit());
  }

  private async restore(): Promise<void> {
    await this.queue.restore();
    if (this.storage && this.userId === undefined) {
      try {
        this.userId = (await this.storage.getItem(this.storageKey + USER_KEY_SUFFIX)) ?? undefined;
      } catch (error) {
        this.debug('storage failed', error);
      }
    }
    this.schedule();
  }

  /** The current user: the one identified, else a random anonymous id kept in storage. */
  get currentUserId(): string {
    if (this.userId === undefined) {
      this.userId = `anon-${uuidv7()}`;
      this.remember(this.userId);
    }
    return this.userId;
  }

  private remember(userId: string): void {
    try {
      Promise.resolve(this.storage?.setItem(this.storageKey + USER_KEY_SUFFIX, userId)).catch((error) =>
        this.debug('storage failed', error),
      );
    } catch (error) {
      this.debug('storage failed', error);
    }
  }

  /**
   * Names the app's user for the events and feedback calls that follow, and registers it
   * (POST /users/register) with its MRR. An omitted `mrr` keeps the stored one; `null` clears it.
   */
  identify(userId: string, traits: { mrr?: number | null } = {}): Promise<SdkUser> {
    this.userId = userId;
    this.remember(userId);
    return this.request<SdkUser>('POST', '/users/register', { body: { userId, ...traits } });
  }

  /**
   * Queues an event and returns its eventId (a UUIDv7 given now, so every retry of it is the
   * same event to the server). Sent within `flushIntervalMs`, or at once when `flushAt` are queued.
   */
  track(eventName: string, properties?: Record<string, unknown>, options: TrackOptions = {}): string {
    const at = options.timestamp?.getTime() ?? this.now();
    const event: QueuedEvent = {
      eventId: uuidv7(at),
      eventName,
      userId: options.userId ?? this.currentUserId,
      timestamp: new Date(at).toISOString(),
      ...(properties === undefined ? {} : { properties }),
    };
    if (this.closed) {
      this.drops.drop('CLIENT_CLOSED', [event.eventId]);
      return event.eventId;
    }
    this.queue.push(event);
    if (this.queue.length >= this.flushAt) this.kick();
    else this.schedule();
    return event.eventId;
  }

  /**
   * Sends every queued event now, one request at a time. Rejects when delivery failed with a
   * retryable error: the events stay queued and are retried after the backoff.
   */
  async flush(): Promise<void> {
    await this.ready;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.delivery.flush();
  }

  /**
   * Flushes (waiting for retries up to `timeoutMs`), then stops timers and listeners. What is still
   * queued then stays in storage for the next start; without storage (Node's default) it is
   * dropped and reported (SHUTDOWN_TIMEOUT).
   */
  async shutdown(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.unsubscribeExit?.();
    this.unsubscribeExit = undefined;
    await this.deliverUntil(this.now() + timeoutMs);
    clearTimeout(this.timer);
    this.delivery.cancelRetry();
  }

  /** Sends until the queue is empty or the deadline passes; then keeps the rest in storage, or reports it lost. */
  private async deliverUntil(deadline: number): Promise<void> {
    await this.ready;
    while (this.queue.length > 0 && this.now() < deadline) {
      try {
        await this.flush();
      } catch {
        // A timer that holds the process open: this wait is what it is waiting for.
        await new Promise((resolve) => setTimeout(resolve, Math.min(1000, Math.max(0, deadline - this.now()))));
      }
    }
    if (this.queue.length === 0) return;
    if (this.storage) this.queue.write();
    else
      this.drops.drop(
        'SHUTDOWN_TIMEOUT',
        this.queue.takeAll().map((event) => event.eventId),
      );
  }

  /**
   * Node's `beforeExit`: the app's work is done and only the queue is left. Delivers it (the
   * requests keep the process alive) for up to `exitTimeoutMs` from the first time the process
   * tried to end, then gives up, so a service that is down delays the exit by that much at most.
   */
  private beforeExit(): void {
    if (this.exiting || this.closed || this.queue.length === 0) return;
    this.exitDeadline ??= this.now() + this.exitTimeoutMs;
    if (this.now() >= this.exitDeadline) return; // given up: what storage holds waits for the next start
    this.exiting = true;
    this.deliverUntil(this.exitDeadline).finally(() => {
      this.exiting = false;
    });
  }

  /** Counters since this client started (queued and the drops also count what storage held). */
  stats(): FeedbackStats {
    return {
      ...this.delivery.stats,
      queued: this.queue.length,
      dropped: this.drops.total,
      droppedBy: { ...this.drops.counts },
    };
  }

  // The feedback calls of SPEC part 4: sent at once, never queued; the user defaults to the current one.

  /** GET /feedbacks: filters and order as in SPEC 4.1; `has_voted` is for the current user. */
  listFeedback(query: ListFeedbackQuery & { userId?: string } = {}): Promise<Feedback[]> {
    const { userId, ...filters } = query;
    return this.request<Feedback[]>('GET', '/feedbacks', { query: filters, userId: userId ?? this.userId });
  }

  createFeedback(body: Omit<CreateFeedbackBody, 'userId'> & { userId?: string }): Promise<Feedback> {
    return this.request<Feedback>('POST', '/feedbacks', { body: { ...body, userId: body.userId ?? this.currentUserId } });
  }

  getFeedback(id: string, options: { userId?: string } = {}): Promise<Feedback> {
    return this.request<Feedback>('GET', `/feedbacks/${encodeURIComponent(id)}`, { userId: options.userId ?? this.userId });
  }

  vote(id: string, body: Partial<VoteBody> = {}): Promise<Vote> {
    return this.request<Vote>('POST', `/feedbacks/${encodeURIComponent(id)}/votes`, {
      body: { ...body, userId: body.userId ?? this.currentUserId },
    });
  }

  unvote(id: string, body: { userId?: string } = {}): Promise<Vote> {
    return this.request<Vote>('DELETE', `/feedbacks/${encodeURIComponent(id)}/votes`, {
      body: { userId: body.userId ?? this.currentUserId },
    });
  }

  listComments(id: string): Promise<Comment[]> {
    return this.request<Comment[]>('GET', `/feedbacks/${encodeURIComponent(id)}/comments`);
  }

  addComment(id: string, body: Omit<CommentBody, 'userId'> & { userId?: string }): Promise<Comment> {
    return this.request<Comment>('POST', `/feedbacks/${encodeURIComponent(id)}/comments`, {
      body: { ...body, userId: body.userId ?? this.currentUserId },
    });
  }

  /**
   * Starts a flush unless one runs or a retry waits out its backoff; `now` skips the backoff
   * (the network is back, the app is in front again).
   */
  private kick(now = false): void {
    // `kicked`: a burst of track() calls starts one flush, not one per call.
    if (this.kicked || this.delivery.busy || (this.delivery.backingOff && !now)) return;
    this.kicked = true;
    this.flush()
      .catch(() => undefined) // reported through onError; the retry is scheduled
      .finally(() => {
        this.kicked = false;
      });
  }

  /** Flushes within `flushIntervalMs` of the first event queued since the last flush. */
  private schedule(): void {
    if (this.timer !== undefined || this.queue.length === 0 || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.kick();
    }, this.flushIntervalMs);
    unref(this.timer);
  }

  private background(unloading: boolean): void {
    this.queue.write();
    if (unloading) this.delivery.flushForUnload();
    else this.kick();
  }
}
