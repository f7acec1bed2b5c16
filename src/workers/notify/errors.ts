/**
 * A failed attempt of a delivery. `permanent` failures (a refused address, a receiver answering
 * 4xx that says the request itself is wrong, a removed integration) are not retried: the delivery
 * is marked failed at once, for an operator to fix and retry.
 */
export class DeliveryError extends Error {
  override name = 'DeliveryError';
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly later: {
      /** The receiver said when to come back (a tracker's Retry-After or rate-limit reset): then, not the backoff's time. */
      retryAfterMs?: number | undefined;
      /** Not a failed attempt: the delivery waits `retryAfterMs` without counting it (a tracker's votes update within the minute). */
      deferred?: boolean | undefined;
    } = {},
  ) {
    super(message);
  }
}
