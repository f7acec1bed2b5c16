import { z } from 'zod';

/*
 * Field schemas the response schemas (*.responses.ts) share. Response bodies travel in snake_case
 * (SPEC 1, rule 1); response schemas validate nothing at run time: they describe the bodies the
 * presenters, the metrics service and the error middleware build, and the OpenAPI document is
 * generated from them. `.meta({ id })` names a schema: it becomes a component under
 * #/components/schemas.
 */

export const uuid = z.uuid();
/**
 * Every timestamp of an answer: RFC 3339 in whole seconds, UTC (core/time.ts says why). The
 * precision is part of the schema, so the document's pattern and the test that checks real
 * answers against it both refuse a fraction.
 */
export const timestamp = z.iso.datetime({ precision: 0 }).meta({
  description: 'RFC 3339 timestamp in whole seconds, UTC (`2026-01-31T12:00:00Z`)',
  example: '2026-01-31T12:00:00Z',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$',
});
export const count = z.number().int().min(0);
