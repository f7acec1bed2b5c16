import type { MetricsErrorBody, ServerErrorBody } from './api-types.js';

/**
 * A refusal from the service, with the body it sent. SPEC 7 has two shapes: the server-wide
 * `{ error: true, reason }` (7.1) and the metrics API's `{ error: { code, message } }` (7.2);
 * `reason` and `code` read either, so callers need not tell them apart.
 */
export class FeedbackApiError extends Error {
  override readonly name = 'FeedbackApiError';
  /** The stable code of a 7.2 body (metrics); undefined for a 7.1 body. */
  readonly code: string | undefined;
  /** The service's explanation: `reason` of 7.1 or `message` of 7.2 (else the status line). */
  readonly reason: string;
  constructor(
    readonly status: number,
    readonly body: ServerErrorBody | MetricsErrorBody | undefined,
    /** Milliseconds the service asked to wait (Retry-After), if it said. */
    readonly retryAfterMs?: number,
  ) {
    const error = body?.error;
    const reason = typeof error === 'object' && error !== null ? error.message : (body as ServerErrorBody | undefined)?.reason;
    super(`HTTP ${status}: ${reason ?? 'no reason given'}`);
    this.reason = reason ?? `HTTP ${status}`;
    this.code = typeof error === 'object' && error !== null ? error.code : undefined;
  }
}

/** The request never got an answer: no network, connection refused or reset, or the timeout. */
export class FeedbackNetworkError extends Error {
  override readonly name = 'FeedbackNetworkError';
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** Whether sending the same request again may succeed: no answer, a 5xx, a 408 or a 429. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof FeedbackNetworkError) return true;
  return error instanceof FeedbackApiError && (error.status >= 500 || error.status === 429 || error.status === 408);
}
