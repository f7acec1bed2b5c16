import type { IngestEvent } from '../../core/event.js';

/**
 * Where the API hands accepted events. `submit` resolves only once the events are durable
 * (committed in ClickHouse, or in the Redis queue; an event ClickHouse refused for its data is
 * durable in the dead letters instead, see EventWriter), with the event as stored for each
 * input, in order: for a retried client eventId that is the first request's event.
 */
export interface EventSink {
  submit(events: IngestEvent[]): Promise<IngestEvent[]>;
  /** Flushes what is buffered; later submits are refused. */
  close(): Promise<void>;
}

export class SinkUnavailableError extends Error {
  override name = 'SinkUnavailableError';
}
