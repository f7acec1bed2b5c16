/** A refused or failed API call, with what the pages need to explain it. */
export class ApiFailure extends Error {
  constructor(
    /** HTTP status; 0 when the service could not be reached. */
    readonly status: number,
    readonly reason: string,
    /** The metrics API's stable code (METRICS_…), when the body had one. */
    readonly code: string | null,
    /** X-Request-Id of the response: what an operator looks for in the service's log. */
    readonly requestId: string | null,
    /** Seconds to wait before retrying (429, 503). */
    readonly retryAfterSeconds: number | null,
  ) {
    super(reason);
    this.name = 'ApiFailure';
  }

  /** Reads both SPEC error shapes: `{ error: true, reason }` and `{ error: { code, message } }`. */
  static fromResponse(response: Response, body: unknown): ApiFailure {
    let reason = `${response.status} ${response.statusText}`.trim();
    let code: string | null = null;
    if (body && typeof body === 'object' && 'error' in body) {
      const { error, reason: given } = body as { error: unknown; reason?: unknown };
      if (error === true && typeof given === 'string') {
        reason = given;
      } else if (error && typeof error === 'object') {
        const { code: c, message } = error as { code?: unknown; message?: unknown };
        if (typeof message === 'string') reason = message;
        if (typeof c === 'string') code = c;
      }
    }
    const retryAfter = Number(response.headers.get('retry-after'));
    return new ApiFailure(
      response.status,
      reason,
      code,
      response.headers.get('x-request-id'),
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
    );
  }

  /** The failure a thrown value stands for: itself, or a network failure. */
  static of(error: unknown): ApiFailure {
    return error instanceof ApiFailure ? error : ApiFailure.network(error);
  }

  static network(error: unknown): ApiFailure {
    const detail = error instanceof Error ? error.message : String(error);
    return new ApiFailure(0, `the service could not be reached (${detail})`, null, null, null);
  }
}

/** What an openapi-fetch call resolves to. */
type Outcome<T> = { data?: T; error?: unknown; response: Response };

/**
 * The body of a successful call, or an ApiFailure with the status, the reason from either SPEC
 * error shape, the request id and Retry-After. Network errors become a failure with status 0.
 */
export async function unwrap<T>(call: Promise<Outcome<T>>): Promise<T> {
  let outcome: Outcome<T>;
  try {
    outcome = await call;
  } catch (error) {
    throw ApiFailure.network(error);
  }
  if (outcome.response.ok && outcome.data !== undefined) return outcome.data;
  throw ApiFailure.fromResponse(outcome.response, outcome.error);
}
