/** What the two tracker clients share in reading a failure. */

/** The SSRF guard's refusal somewhere in an error's causes (fetch wraps it), or null. */
export function blockedCause(error: unknown): string | null {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    const entry = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (entry.code === 'ERR_BLOCKED_ADDRESS' || entry.name === 'BlockedAddressError') return String(entry.message);
    current = entry.cause;
  }
  return null;
}

/** Waits shorter than this are rounded up: a reset "now" by a clock a little ahead of ours is not a reason to call at once. */
const MIN_WAIT_MS = 1_000;
/** A reset further out than this is read as a broken header, and capped. */
const MAX_WAIT_MS = 24 * 3600 * 1000;

/**
 * How long a rate-limited caller waits, from `Retry-After` (seconds, or an HTTP date) or from a
 * reset time (epoch seconds as GitHub sends `x-ratelimit-reset`, or epoch milliseconds as Linear
 * sends `X-RateLimit-Requests-Reset`); null when neither says.
 */
export function retryAfterMs(retryAfter: unknown, reset: unknown, now = Date.now()): number | null {
  const clamp = (ms: number) => Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.ceil(ms)));
  if (retryAfter !== undefined && retryAfter !== null && String(retryAfter).trim() !== '') {
    const text = String(retryAfter).trim();
    if (/^\d+(\.\d+)?$/.test(text)) return clamp(Number(text) * 1000);
    const date = Date.parse(text);
    if (Number.isFinite(date)) return clamp(date - now);
  }
  if (reset !== undefined && reset !== null && /^\d+(\.\d+)?$/.test(String(reset).trim())) {
    const value = Number(reset);
    const at = value > 1e12 ? value : value * 1000;
    return clamp(at - now);
  }
  return null;
}
