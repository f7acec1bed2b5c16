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
export type EventTime = { ok: true; createdAt: string } | { ok: false; reason: string };

/** The shift to apply to the client's times: `received − sentAt` in ms, or undefined without sentAt. */
export function clockSkewMs(sentAt: string | undefined, receivedMs: number): number | undefined {
  return sentAt === undefined ? undefined : receivedMs - Date.parse(sentAt);
}

export function eventTime(timestamp: string | undefined, received: { ms: number; iso: string }, skewMs: number | undefined): EventTime {
  if (timestamp === undefined) return { ok: true, createdAt: received.iso };
  const earliest = received.ms - MAX_PAST_MS;
  const latest = received.ms + MAX_FUTURE_MS;
  const sent = Date.parse(timestamp);
  if (skewMs === undefined) {
    if (sent > latest) return { ok: false, reason: 'timestamp: must be at most 1 hour in the future' };
    if (sent < earliest) return { ok: false, reason: 'timestamp: must be at most 2 years in the past' };
    return { ok: true, createdAt: new Date(sent).toISOString() };
  }
  const corrected = Math.min(latest, Math.max(earliest, sent + skewMs));
  return { ok: true, createdAt: new Date(corrected).toISOString() };
}
