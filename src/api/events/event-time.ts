import { MAX_FUTURE_MS, MAX_PAST_MS } from './events.schema.js';

/**
 * When an event happened, on the server's timeline (issue 22, docs/ingestion.md "Protocol").
 *
 * A client's clock may be wrong by hours. The client says when it sent the request (`sentAt`, by
 * its own clock); the server knows when it received it. Their difference, `received − sentAt`, is
 * the client clock's error plus the time in transit (small next to a wrong clock), and shifting
 * the event's `timestamp` by it puts the event on the server's timeline:
 * `stored = timestamp + (received − sentAt)`, clamped to the accepted window (at most
 * MAX_PAST_MS back, MAX_FUTURE_MS ahead). Without `sentAt` the timestamp is taken as sent, and one
 * outside that window is refused, as before. An event without a timestamp keeps the receive time.
 */
export type EventTime = string | TimeRefusal;
/** Why an event's time was refused (one object per reason, made once: no object per accepted event). */
export type TimeRefusal = { readonly reason: string };

const TOO_LATE: TimeRefusal = { reason: 'timestamp: must be at most 1 hour in the future' };
const TOO_EARLY: TimeRefusal = { reason: 'timestamp: must be at most 2 years in the past' };

/** The shift to apply to the client's times: `received − sentAt` in ms, or undefined without sentAt. */
export function clockSkewMs(sentAt: string | undefined, receivedMs: number): number | undefined {
  return sentAt === undefined ? undefined : receivedMs - Date.parse(sentAt);
}

/** The event's stored time (`created_at`, ISO), or why its timestamp is refused. */
export function eventTime(timestamp: string | undefined, received: { ms: number; iso: string }, skewMs: number | undefined): EventTime {
  if (timestamp === undefined) return received.iso;
  const earliest = received.ms - MAX_PAST_MS;
  const latest = received.ms + MAX_FUTURE_MS;
  const sent = Date.parse(timestamp);
  if (skewMs === undefined) {
    if (sent > latest) return TOO_LATE;
    if (sent < earliest) return TOO_EARLY;
    return new Date(sent).toISOString();
  }
  const corrected = Math.min(latest, Math.max(earliest, sent + skewMs));
  return new Date(corrected).toISOString();
}
