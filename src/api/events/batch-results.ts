import { type IngestEvent, type TrackedEventResponse, toTrackedEvent } from '../../core/event.js';

/**
 * What became of one event of a batch (docs/ingestion.md, "Protocol"). By default the answer is
 * lean: the status and the stored event's id, or the reason of a refusal. With `?echo=true` an
 * accepted or duplicate event carries the stored event whole instead of its id.
 */
export type BatchEventResult =
  | { status: 'accepted'; id: string }
  | { status: 'duplicate'; id: string }
  | { status: 'accepted'; event: TrackedEventResponse }
  | { status: 'duplicate'; event: TrackedEventResponse }
  | { status: 'rejected'; reason: string };

export type BatchEventsResult = { accepted: number; duplicates: number; rejected: number; results: BatchEventResult[] };

/** One event of a batch after validation: the event to store, or why it was refused. */
export type Checked = IngestEvent | { readonly reason: string };

/**
 * Whether `stored`, the sink's answer for `input`, is `input` stored now rather than an earlier
 * copy. The sink answers a new event with itself and a retried eventId with the first request's
 * event (EventSink.submit). Comparing ids cannot tell them apart (a retry carries the same
 * eventId), so:
 * - an eventId already met earlier in this batch is a duplicate of that one (`seen`);
 * - otherwise the event is new when the sink answered it with itself: the very object (both sinks
 *   do), or a copy of it (the BullMQ sink answers the first of an eventId repeated within a
 *   request with the copy it stored in Redis). A copy has this request's receive time and the
 *   same fields; a retry's first copy was received by another request.
 */
function isNew(input: IngestEvent, stored: IngestEvent, seen: Set<string>): boolean {
  if (!input.id_from_client) return stored === input || sameEvent(stored, input);
  const repeated = seen.has(input.event_id);
  seen.add(input.event_id);
  return !repeated && (stored === input || sameEvent(stored, input));
}

/**
 * The answer to a batch with every stored event echoed (`?echo=true`), one result per event in
 * the order sent. `stored` is the sink's answer for the valid events, in order.
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
    const first = stored[next++] as IngestEvent;
    if (isNew(item, first, seen)) {
      answer.accepted++;
      answer.results.push({ status: 'accepted', event: toTrackedEvent(first) });
    } else {
      answer.duplicates++;
      answer.results.push({ status: 'duplicate', event: toTrackedEvent(first) });
    }
  }
  return answer;
}

/**
 * The default, lean answer to a batch as JSON text: the same results with the stored event's id
 * instead of the event. Written as text in one pass: no result objects, no second walk by
 * JSON.stringify (ids are UUIDs, statuses fixed words; only reasons need escaping).
 */
export function leanBatchResultsJson(checked: Checked[], stored: IngestEvent[]): string {
  let accepted = 0;
  let duplicates = 0;
  let rejected = 0;
  let results = '';
  const seen = new Set<string>();
  let next = 0;
  for (const item of checked) {
    if (results !== '') results += ',';
    if ('reason' in item) {
      rejected++;
      results += `{"status":"rejected","reason":${JSON.stringify(item.reason)}}`;
      continue;
    }
    const first = stored[next++] as IngestEvent;
    if (isNew(item, first, seen)) {
      accepted++;
      results += `{"status":"accepted","id":"${first.event_id}"}`;
    } else {
      duplicates++;
      results += `{"status":"duplicate","id":"${first.event_id}"}`;
    }
  }
  return `{"accepted":${accepted},"duplicates":${duplicates},"rejected":${rejected},"results":[${results}]}`;
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
