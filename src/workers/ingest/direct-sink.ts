import { uuidv7 } from 'uuidv7';
import { eventKey, type IngestEvent } from '../../core/event.js';
import { SinkUnavailableError, type EventSink } from './event-sink.js';
import type { EventWriter, WriteResult } from './event-writer.js';
import { MicroBatcher } from './micro-batcher.js';

/**
 * Without Redis: concurrent requests are coalesced in memory and written straight to ClickHouse
 * by the same EventWriter the queue workers use. One flush runs at a time, so the duplicate check
 * of client event ids cannot race, and batches grow while a flush is busy.
 */
export class DirectEventSink implements EventSink {
  readonly #batcher: MicroBatcher<IngestEvent, WriteResult>;
  #closed = false;

  constructor(writer: EventWriter, options: { maxItems?: number; maxDelayMs?: number } = {}) {
    this.#batcher = new MicroBatcher({
      maxItems: options.maxItems ?? 20_000,
      maxDelayMs: options.maxDelayMs ?? 5,
      maxConcurrentFlushes: 1,
      flush: (events) => writer.write(events, `events:${uuidv7()}`),
    });
  }

  async submit(events: IngestEvent[]): Promise<IngestEvent[]> {
    if (this.#closed) throw new SinkUnavailableError('shutting down');
    const result = await this.#batcher.add(events);
    return events.map((event) => (event.id_from_client ? (result.stored.get(eventKey(event.project_id, event.event_id)) ?? event) : event));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batcher.drain();
  }
}
