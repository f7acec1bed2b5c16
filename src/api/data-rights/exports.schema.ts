import { z } from 'zod';
import { EXPORT_FORMATS } from '../../olap/data-rights/exports.js';

const format = <const F extends readonly [string, ...string[]]>(formats: F) =>
  z
    .enum(formats, { error: `must be one of ${formats.join(', ')}` })
    .optional()
    .default(formats[0] as F[number]);

/** GET /projects/:id/exports/events. Dates are checked by the metrics window (src/olap/metrics/window.ts). */
export const EventsExportQuery = z.object({
  format: format(EXPORT_FORMATS),
  date_from: z.string().optional(),
  date_to: z.string().optional(),
});
export type EventsExportQuery = z.infer<typeof EventsExportQuery>;

/** Formats of the PostgreSQL exports (feedback, SDK users). */
export const TABLE_EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type TableExportFormat = (typeof TABLE_EXPORT_FORMATS)[number];

/** GET /projects/:id/exports/feedbacks and /exports/users. */
export const TableExportQuery = z.object({ format: format(TABLE_EXPORT_FORMATS) });
export type TableExportQuery = z.infer<typeof TableExportQuery>;
