import { uuidv7 } from 'uuidv7';
import { eventKey, type IngestEvent } from './event.js';
import { SinkUnavailableError, type EventSink } from './event-sink.js';
import type { EventWriter, WriteResult } from './event-writer.js';
import { MicroBatcher } from './micro-batcher.js';

/**
 * Flushes allowed to run at once. A request is answered only once its flush is committed, so
 * throughput is about (requests in flight) / (insert latency); a second insert overlapping the
 * first gave 1.6x the rows per second of one-at-a-time with 50-row batches in chDB (BENCHMARKS.md).
 */
const CONCURRENT_FLUSHES = 2;

/**
 * Without Redis: concurrent requests are coalesced in memory and written straight to ClickHouse
 * by the same EventWriter the queue workers use. Batches grow while the flushes are busy.
 *
 * Two flushes may run at once, but never two holding the same client eventId: a flush waits for
 * any earlier flush that holds one of its ids, so that its duplicate check sees the earlier
 * insert committed, and the event is stored once.
 */
export class DirectEventSink implements EventSink {
  readonly #batcher: MicroBatcher<IngestEvent, WriteResult>;
  /** Client eventId key → the flush that holds it, until that flush ends. */
  readonly #holding = new Map<string, Promise<unknown>>();
  #closed = false;

  constructor(
    private readonly writer: EventWriter,
    options: { maxItems?: number; maxDelayMs?: number } = {},
  ) {
    this.#batcher = new MicroBatcher({
      maxItems: options.maxItems ?? 20_000,
      maxDelayMs: options.maxDelayMs ?? 5,
      maxConcurrentFlushes: CONCURRENT_FLUSHES,
      flush: (events) => this.#flush(events),
    });
  }

  async submit(events: IngestEvent[]): Promise<IngestEvent[]> {
    if (this.#closed) throw new SinkUnavailableError('shutting down');
    const result = await this.#batcher.add(events);
    return events.map((event) =>
      event.client_id ? (result.stored.get(eventKey(event.project_id, event.event_id)) ?? event) : event,
    );
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batcher.drain();
  }

  async #flush(events: IngestEvent[]): Promise<WriteResult> {
    const keys = events.filter((event) => event.client_id).map((event) => eventKey(event.project_id, event.event_id));
    const earlier = new Set<Promise<unknown>>();
    for (const key of keys) {
      const holder = this.#holding.get(key);
      if (holder) earlier.add(holder);
    }
    const run = Promise.allSettled(earlier).then(() => this.writer.write(events, `events:${uuidv7()}`));
    for (const key of keys) this.#holding.set(key, run);
    try {
      return await run;
    } finally {
      for (const key of keys) if (this.#holding.get(key) === run) this.#holding.delete(key);
    }
  }
}
