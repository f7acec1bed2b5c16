import type { IngestEvent } from '../../core/event.js';
import type { EventSink } from '../../ingest/event-sink.js';
import type { LiveFeed } from './live-feed.js';

/**
 * The live view's hook on ingestion: the events route's sink, which hands the live feed every
 * event once the sink has acknowledged it (as stored: a retried eventId's first event).
 */
export function publishingSink(sink: EventSink, feed: LiveFeed): EventSink {
  return {
    async submit(events: IngestEvent[]): Promise<IngestEvent[]> {
      const stored = await sink.submit(events);
      feed.publish(stored);
      return stored;
    },
    start: sink.start?.bind(sink),
    close: () => sink.close(),
  };
}
