import { z } from 'zod';
import { bodySchema } from '../validation.js';
import { AdhocSqlBody } from './sql.routes.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const day = z.string({ error: 'must be a date as YYYY-MM-DD' }).regex(DATE, 'must be a date as YYYY-MM-DD').optional();

/**
 * POST /projects/:id/sql: the operator's body (`query`, `params`) plus the window to read, whole
 * UTC days as in the metrics API; the plan clamps it (SPEC 8.3).
 */
export const ProjectSqlBody = bodySchema({
  ...AdhocSqlBody.out.shape,
  dateFrom: day,
  dateTo: day,
});
export type ProjectSqlBody = z.infer<typeof ProjectSqlBody>;
