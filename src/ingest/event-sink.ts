import type { IngestEvent } from '../core/event.js';

/**
 * Where the API hands accepted events. `submit` resolves only once the events are durable
 * (fsync'd in the local ingest log, or in the Redis queue), with the event as stored for each
 * input, in order: for a retried client eventId that is the first request's event. An event
 * ClickHouse later refuses for its data is kept in the dead letters (EventWriter).
 */
export interface EventSink {
  submit(events: IngestEvent[]): Promise<IngestEvent[]>;
  /** Starts moving accepted events on to ClickHouse, where the sink does that itself (the local log). */
  start?(): void;
  /** Flushes what is buffered; later submits are refused. */
  close(): Promise<void>;
  /**
   * Whether every event acknowledged before `before` is in ClickHouse, where the sink itself moves
   * events there (the local log). An erasure waits for it before it deletes.
   */
  settledBefore?(before: Date): Promise<boolean>;
  /**
   * Removes from the sink's own disk the raw events already in ClickHouse (the local log's
   * segments), so an erased user's events do not outlive the erasure there.
   */
  purgeShipped?(): Promise<void>;
}

export class SinkUnavailableError extends Error {
  override name = 'SinkUnavailableError';
}
