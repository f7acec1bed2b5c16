import { type IngestEvent, type TrackedEventResponse, toTrackedEvent } from '../../core/event.js';

/** What became of one event of a batch (docs/ingestion.md, "Protocol"). */
export type BatchEventResult =
  | { status: 'accepted'; event: TrackedEventResponse }
  | { status: 'duplicate'; event: TrackedEventResponse }
  | { status: 'rejected'; reason: string };

export type BatchEventsResult = { accepted: number; duplicates: number; rejected: number; results: BatchEventResult[] };

/** One event of a batch after validation: the event to store, or why it was refused. */
export type Checked = { event: IngestEvent } | { reason: string };

/**
 * The answer to a batch, one result per event in the order sent. `stored` is the sink's answer
 * for the valid events, in order: a new event is answered as it was given, a retried eventId
 * with the first request's event (EventSink.submit). Comparing ids cannot tell them apart (a
 * retry carries the same eventId), so:
 * - an eventId already met earlier in this batch is a duplicate of that one;
 * - otherwise the event is new when the sink answered it with itself: the very object (both sinks
 *   do), or a copy of it (the BullMQ sink answers the first of an eventId repeated within a
 *   request with the copy it stored in Redis). A copy has this request's receive time and the
 *   same fields; a retry's first copy was received by another request.
 */
export function batchResults(checked: Checked[], stored: IngestEvent[]): BatchEventsResult {
  const answer: BatchEventsResult = { accepted: 0, duplicates: 0, rejected: 0, results: [] };
  const seen = new Set<string>();
  let next = 0;
  for (const item of checked) {
    if ('reason' in item) {
      answer.rejected++;
      answer.results.push({ status: 'rejected', reason: item.reason });
      continue;
    }
    const input = item.event;
    const first = stored[next++] as IngestEvent;
    const repeated = input.id_from_client && seen.has(input.event_id);
    if (input.id_from_client) seen.add(input.event_id);
    if (!repeated && (first === input || sameEvent(first, input))) {
      answer.accepted++;
      answer.results.push({ status: 'accepted', event: toTrackedEvent(first) });
    } else {
      answer.duplicates++;
      answer.results.push({ status: 'duplicate', event: toTrackedEvent(first) });
    }
  }
  return answer;
}

function sameEvent(a: IngestEvent, b: IngestEvent): boolean {
  return (
    a.event_id === b.event_id &&
    a.received_at === b.received_at &&
    a.created_at === b.created_at &&
    a.event_name === b.event_name &&
    a.user_id === b.user_id &&
    JSON.stringify(a.properties) === JSON.stringify(b.properties)
  );
}
