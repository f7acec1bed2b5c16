import { expect } from 'vitest';
import type { HttpResponse } from './server.js';

/** A well-formed UUID that names no row: a missing resource, as opposed to a malformed id. */
export const MISSING_ID = '00000000-0000-4000-8000-000000000000';

/**
 * The server-wide error body (SPEC 7.1), whatever its reason, with `message`: the same text, for
 * clients that read it there (docs/clients.md).
 */
export const errorBody = { error: true, reason: expect.any(String), message: expect.any(String) };

/** A refusal with `status` in the SPEC 7.1 body; with `field`, its reason names that field. */
export function expectError(response: HttpResponse, status: number, field?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toEqual(errorBody);
  expect(response.body.message).toBe(response.body.reason);
  if (field !== undefined) expect(response.body.reason).toContain(field);
}
