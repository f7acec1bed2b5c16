import { z } from 'zod';
import type { ErrorBody as ErrorBodyType } from './errors.js';
import type { Expect, Out, SameShape } from './openapi/shape-checks.js';

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

export type ErrorResponseChecks = [Expect<SameShape<ErrorBodyType, Out<typeof ErrorBody>>>];
