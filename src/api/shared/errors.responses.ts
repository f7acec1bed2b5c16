import { z } from 'zod';
import {
  METRICS_ERROR_STATUS,
  type MetricsErrorBody as MetricsErrorBodyType,
  type MetricsErrorCode,
} from '../../olap/metrics/metrics.errors.js';
import type { ErrorBody as ErrorBodyType } from '../errors.js';
import type { Expect, Out, SameShape } from './shape-checks.js';

// The server-wide error body (SPEC 7.1), as the error middleware builds it.

export const ErrorBody = z
  .object({
    error: z.literal(true),
    reason: z.string().meta({ description: 'What went wrong. A validation error names the field: `title: must be 1 to 200 characters`.' }),
    message: z.string().meta({
      description:
        'The same text as `reason`, for clients that read the error text from `message` (the origin project’s Kotlin SDK). Not in SPEC 7.1; additive (docs/clients.md).',
    }),
  })
  .meta({
    id: 'Error',
    description:
      'The server-wide error body (SPEC 7.1): authentication and authorization failures, validation errors of the non-metrics operations, 404, 409, 413, 500 and 503. There is no code field. `message` repeats `reason`.',
  });

// The metrics API's own error body (SPEC 7.2): its routes and the insights routes that share its planner answer with it.

const METRICS_ERROR_CODES = Object.keys(METRICS_ERROR_STATUS) as [MetricsErrorCode, ...MetricsErrorCode[]];

export const MetricsErrorCodeSchema = z.enum(METRICS_ERROR_CODES).meta({
  id: 'MetricsErrorCode',
  description: `Stable code of a metrics refusal, with its status: ${METRICS_ERROR_CODES.map((code) => `${code} (${METRICS_ERROR_STATUS[code]})`).join(', ')}.`,
});

export const MetricsErrorBody = z
  .object({
    error: z.object({
      code: MetricsErrorCodeSchema,
      message: z.string().meta({ description: 'Human-readable explanation; not stable.' }),
    }),
  })
  .meta({
    id: 'MetricsError',
    description:
      'Refusals of the metrics API itself (SPEC 7.2): its 400s, the 402 and the 403 for an admin-only measure asked with an API key. `error` is an object here and a boolean in the server-wide body, so clients tell the two apart by its type.',
  });

export type ErrorResponseChecks = [
  Expect<SameShape<ErrorBodyType, Out<typeof ErrorBody>>>,
  Expect<SameShape<MetricsErrorBodyType, Out<typeof MetricsErrorBody>>>,
];
