import { afterAll, afterEach } from 'vitest';
import { takeViolations } from './openapi-validator.js';

/*
 * Safety net of the OpenAPI response check (openapi-validator.ts), loaded into every test file by
 * vitest.config.ts: a violation fails the request that met it, and, should a test have caught that
 * error (or a request have run in a hook or in the background), it fails here too.
 */

function failOnViolations(): void {
  const violations = takeViolations();
  if (violations.length === 0) return;
  const distinct = [...new Set(violations)];
  const shown = distinct.slice(0, 3).join('\n');
  const more = distinct.length > 3 ? `\n… and ${distinct.length - 3} more distinct violation(s)` : '';
  throw new Error(`${violations.length} response(s) violated the OpenAPI document:\n${shown}${more}`);
}

afterEach(failOnViolations);
afterAll(failOnViolations);
