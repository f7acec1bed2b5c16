import { z } from 'zod';

/*
 * Field schemas the response schemas (*.responses.ts) share. Response bodies travel in snake_case
 * (SPEC 1, rule 1); response schemas validate nothing at run time: they describe the bodies the
 * presenters, the metrics service and the error middleware build, and the OpenAPI document is
 * generated from them. `.meta({ id })` names a schema: it becomes a component under
 * #/components/schemas.
 */

export const uuid = z.uuid();
export const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 timestamp, UTC (`2026-01-31T12:00:00.000Z`)' });
export const count = z.number().int().min(0);
