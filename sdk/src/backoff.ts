/**
 * Full-jitter exponential backoff (AWS Architecture Blog, "Exponential Backoff and Jitter"): a
 * random wait between 0 and min(cap, base · 2^attempt). Clients that failed together spread out
 * instead of returning together, which a fixed or equal-jitter schedule would not do.
 */
export function fullJitterDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(capMs, baseMs * 2 ** Math.min(attempt, 30)));
}

/** Retry-After (RFC 9110 10.2.3) in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
