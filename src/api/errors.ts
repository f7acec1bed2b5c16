/**
 * The one error kind the API throws on purpose. The error middleware turns it into the SPEC 7.1
 * body `{ error: true, reason }`; anything else becomes a 500 whose details stay in the log.
 */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly status: number,
    readonly reason: string,
    /** Extra response headers, e.g. Retry-After on a 429. */
    readonly headers: Record<string, string> = {},
  ) {
    super(reason);
  }
}

export const badRequest = (reason: string) => new AppError(400, reason);
export const unauthorized = (reason: string) => new AppError(401, reason);
export const paymentRequired = (reason: string) => new AppError(402, reason);
export const forbidden = (reason: string) => new AppError(403, reason);
export const notFound = (reason: string) => new AppError(404, reason);
export const conflict = (reason: string) => new AppError(409, reason);

/**
 * SPEC 7.1's body, plus `message`: the same text as `reason`, for clients that read the error
 * text from `message` (the origin's Kotlin SDK reads `message` first, and without it showed the
 * `error` field, "true"). Additive: SPEC clients read `reason` as before (docs/clients.md).
 */
export type ErrorBody = { error: true; reason: string; message: string };

/** The server-wide error body of a reason. */
export const errorBodyOf = (reason: string): ErrorBody => ({ error: true, reason, message: reason });
