/**
 * Stable codes of the metrics API's own refusals (SPEC 7.2), answered with the body
 * `{ "error": { "code", "message" } }`. Auth failures, 404, 429 and 500 keep the SPEC 7.1 body.
 */
export const METRICS_ERROR_STATUS = {
  METRICS_INVALID_DATE: 400,
  METRICS_INVALID_RANGE: 400,
  METRICS_UNKNOWN_MEASURE: 400,
  METRICS_INVALID_INTERVAL: 400,
  METRICS_TOO_MANY_BUCKETS: 400,
  METRICS_INVALID_DIMENSION: 400,
  METRICS_MEASURE_NOT_SPLITTABLE: 400,
  METRICS_INVALID_LIMIT: 400,
  METRICS_INVALID_CURSOR: 400,
  METRICS_INVALID_PARAMETER: 400,
  METRICS_CUSTOM_EVENTS_REQUIRE_PRO: 402,
  METRICS_MEASURE_REQUIRES_ADMIN_TOKEN: 403,
} as const;
export type MetricsErrorCode = keyof typeof METRICS_ERROR_STATUS;

export class MetricsError extends Error {
  override name = 'MetricsError';
  readonly status: number;
  constructor(
    readonly code: MetricsErrorCode,
    message: string,
  ) {
    super(message);
    this.status = METRICS_ERROR_STATUS[code];
  }
}

export type MetricsErrorBody = { error: { code: MetricsErrorCode; message: string } };
