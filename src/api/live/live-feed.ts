import type { Redis } from 'ioredis';
import type { IngestEvent } from '../../core/event.js';

export type LiveListener = (events: IngestEvent[]) => void;

/**
 * The one source of acknowledged events in an API process, fanned out to its live-view streams
 * (GET /projects/:id/live): nothing polls ClickHouse per client.
 */
export interface LiveFeed {
  /** Events the sink has just acknowledged; cheap and synchronous on the ingestion path. */
  publish(events: readonly IngestEvent[]): void;
  /** Whether publishing can reach a stream now; false lets the ingestion path skip the feed. */
  listening(): boolean;
  /**
   * Calls `listener` with every later acknowledged event of the project, of any API process. The
   * promise resolves once the subscription sees every process's events; the function unsubscribes.
   */
  subscribe(projectId: string, listener: LiveListener, onEnd: () => void): Promise<() => void>;
  /** Shutdown: asks every stream to end (`onEnd`), so the HTTP server can close at once. */
  endStreams(): void;
  close(): Promise<void>;
}

/** Listeners by project; delivers a batch to the listeners of each project in it. */
class Fanout {
  readonly #listeners = new Map<string, Set<LiveListener>>();
  readonly #enders = new Set<() => void>();

  get size(): number {
    return this.#listeners.size;
  }

  add(projectId: string, listener: LiveListener, onEnd: () => void): () => void {
    const set = this.#listeners.get(projectId) ?? new Set<LiveListener>();
    set.add(listener);
    this.#listeners.set(projectId, set);
    this.#enders.add(onEnd);
    return () => {
      set.delete(listener);
      this.#enders.delete(onEnd);
      if (set.size === 0 && this.#listeners.get(projectId) === set) this.#listeners.delete(projectId);
    };
  }

  endAll(): void {
    for (const end of [...this.#enders]) end();
  }

  has(projectId: string): boolean {
    return this.#listeners.has(projectId);
  }

  deliver(events: readonly IngestEvent[]): void {
    const byProject = new Map<string, IngestEvent[]>();
    for (const event of events) {
      if (!this.#listeners.has(event.project_id)) continue;
      const list = byProject.get(event.project_id) ?? [];
      list.push(event);
      byProject.set(event.project_id, list);
    }
    for (const [projectId, list] of byProject) {
      for (const listener of this.#listeners.get(projectId) ?? []) listener(list);
    }
  }
}

/** One API process (no Redis: embedded mode, where that process is the only one): in memory. */
export class LocalLiveFeed implements LiveFeed {
  readonly #fanout = new Fanout();

  listening(): boolean {
    return this.#fanout.size > 0;
  }

  publish(events: readonly IngestEvent[]): void {
    if (this.#fanout.size === 0) return;
    // After the request's own answer is on its way, not inside the sink's call.
    const copy = [...events];
    setImmediate(() => this.#fanout.deliver(copy));
  }

  async subscribe(projectId: string, listener: LiveListener, onEnd: () => void): Promise<() => void> {
    return this.#fanout.add(projectId, listener, onEnd);
  }

  endStreams(): void {
    this.#fanout.endAll();
  }

  async close(): Promise<void> {}
}

/**
 * With Redis (BullMQ mode, any number of API processes): every process publishes the events it
 * acknowledged on one pub/sub channel, and every process with live streams subscribes to it on a
 * connection of its own, so each stream sees the events of every process.
 *
 * The ingestion path pays only an array push: a process publishes once per event-loop turn, and
 * only while some process listens. Whether one does is asked of Redis (PUBSUB NUMSUB) every
 * `probeMs`; a new stream is announced as ready only after that period, so every process knows of
 * it by then.
 */
export class RedisLiveFeed implements LiveFeed {
  readonly #fanout = new Fanout();
  readonly #channel: string;
  readonly #probe: NodeJS.Timeout;
  #pending: IngestEvent[] = [];
  #flushScheduled = false;
  #someoneListens = false;
  #subscriber: Redis | undefined;
  #subscribed: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly probeMs = 500,
  ) {
    this.#channel = `${prefix}:live-events`;
    this.#probe = setInterval(() => void this.#refresh(), probeMs);
    this.#probe.unref();
    void this.#refresh();
  }

  async #refresh(): Promise<void> {
    try {
      const reply = (await this.redis.call('PUBSUB', 'NUMSUB', this.#channel)) as [string, number | string];
      this.#someoneListens = Number(reply[1]) > 0;
    } catch {
      // Redis unreachable: keep the last answer; ingestion itself reports the outage.
    }
  }

  listening(): boolean {
    return this.#someoneListens;
  }

  publish(events: readonly IngestEvent[]): void {
    if (!this.#someoneListens) return;
    for (const event of events) this.#pending.push(event);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => {
      this.#flushScheduled = false;
      const batch = this.#pending;
      this.#pending = [];
      this.redis.publish(this.#channel, JSON.stringify(batch)).catch(() => undefined);
    });
  }

  endStreams(): void {
    this.#fanout.endAll();
  }

  async subscribe(projectId: string, listener: LiveListener, onEnd: () => void): Promise<() => void> {
    const unsubscribe = this.#fanout.add(projectId, listener, onEnd);
    try {
      await this.#listen();
      this.#someoneListens = true;
      // Every other process asks Redis within probeMs whether anyone listens.
      await new Promise((resolve) => setTimeout(resolve, this.probeMs + 50));
    } catch (error) {
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  #listen(): Promise<void> {
    this.#subscribed ??= (async () => {
      const subscriber = this.redis.duplicate({ enableOfflineQueue: true });
      subscriber.on('error', () => {}); // reconnects (and resubscribes) on its own
      subscriber.on('message', (channel: string, message: string) => {
        if (channel !== this.#channel) return;
        try {
          this.#fanout.deliver(JSON.parse(message) as IngestEvent[]);
        } catch {
          // not ours: ignored
        }
      });
      this.#subscriber = subscriber;
      await subscriber.subscribe(this.#channel);
    })().catch((error: unknown) => {
      this.#subscribed = undefined;
      throw error;
    });
    return this.#subscribed;
  }

  async close(): Promise<void> {
    clearInterval(this.#probe);
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }
}
