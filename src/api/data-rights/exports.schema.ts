import { z } from 'zod';
import { EXPORT_FORMATS } from '../../olap/data-rights/exports.js';
import { describe } from '../shared/building-blocks.js';

const format = <const F extends readonly [string, ...string[]]>(formats: F) =>
  describe(
    z
      .enum(formats, { error: `must be one of ${formats.join(', ')}` })
      .optional()
      .default(formats[0] as F[number]),
    `Output format: ${formats.map((f) => `\`${f}\``).join(', ')}. Default \`${formats[0]}\`.`,
  );

/**
 * A day of the window, described as a date; checked by the metrics window
 * (src/olap/metrics/window.ts), whose refusals the route turns into the SPEC 7.1 body.
 */
const day = (description: string) => describe(z.string().optional().meta({ format: 'date' }), description);

/** GET /projects/:id/exports/events. */
export const EventsExportQuery = z.object({
  format: format(EXPORT_FORMATS),
  date_from: day('First day, `YYYY-MM-DD`, UTC, inclusive. Default: 29 days before `date_to`. Narrowed to the plan’s window.'),
  date_to: day('Last day, `YYYY-MM-DD`, UTC, inclusive. Default: today.'),
});
export type EventsExportQuery = z.infer<typeof EventsExportQuery>;

/** Formats of the PostgreSQL exports (feedback, SDK users). */
export const TABLE_EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type TableExportFormat = (typeof TABLE_EXPORT_FORMATS)[number];

/** GET /projects/:id/exports/feedbacks and /exports/users. */
export const TableExportQuery = z.object({ format: format(TABLE_EXPORT_FORMATS) });
export type TableExportQuery = z.infer<typeof TableExportQuery>;
