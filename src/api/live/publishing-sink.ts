import type { IngestEvent } from '../../core/event.js';
import type { EventSink } from '../../ingest/event-sink.js';
import type { LiveFeed } from './live-feed.js';

/**
 * The live view's hook on ingestion: the events route's sink, which hands the live feed every
 * event once the sink has acknowledged it (as stored: a retried eventId's first event).
 *
 * While no stream listens, the sink's own promise is returned: the track path pays no extra
 * promise and microtask per request for a feed nobody reads. So a stream sees the events of
 * requests that reached the sink after it subscribed (docs/insights.md, "Live view").
 */
export function publishingSink(sink: EventSink, feed: LiveFeed): EventSink {
  const publish = (stored: IngestEvent[]) => {
    feed.publish(stored);
    return stored;
  };
  return {
    submit(events: IngestEvent[]): Promise<IngestEvent[]> {
      if (!feed.listening()) return sink.submit(events);
      return sink.submit(events).then(publish);
    },
    start: sink.start?.bind(sink),
    close: () => sink.close(),
  };
}
