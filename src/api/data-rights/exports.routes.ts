import { z } from 'zod';
import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import { exportEvents } from '../../olap/data-rights/exports.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import { type MetricsWindow, resolveWindow } from '../../olap/metrics/window.js';
import { FEEDBACK_EXPORT_COLUMNS, feedbackExportBatches, SDK_USER_EXPORT_COLUMNS, sdkUserExportBatches } from '../../oltp/exports.repo.js';
import { defineRoute } from '../define-route.js';
import { badRequest } from '../errors.js';
import { error, ProjectPath } from '../shared/building-blocks.js';
import { dataRightsErrors } from '../shared/data-rights.responses.js';
import type { RequestContext } from '../state.js';
import { EXPORT_CONTENT_TYPES, encodeRows, startedStream } from './export-stream.js';
import { EventsExportQuery, TableExportQuery } from './exports.schema.js';

/** The window of an events export: the metrics window (SPEC 8.3), its date errors as a 400 here (not a metrics route). */
function exportWindow(query: EventsExportQuery, plan: Plan): MetricsWindow {
  try {
    return resolveWindow(query, plan);
  } catch (error) {
    if (error instanceof MetricsError) throw badRequest(error.message);
    throw error;
  }
}

/** Stops the export's query when the client goes away before the end. */
function abortOnClose(ctx: RequestContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

function attachment(ctx: RequestContext, format: keyof typeof EXPORT_CONTENT_TYPES, name: string) {
  ctx.type = EXPORT_CONTENT_TYPES[format];
  ctx.set('Content-Disposition', `attachment; filename="${name}.${format}"`);
  ctx.set('Cache-Control', 'no-store');
}

const exportHeaders = {
  'Content-Disposition': { description: '`attachment; filename="…"`.', schema: { type: 'string' as const } },
};

const textExport = (what: string) => ({
  description: `${what}, streamed as it is read (bounded memory on the server).`,
  headers: exportHeaders,
  content: {
    'text/csv': { schema: z.string().meta({ description: 'RFC 4180 CSV, a header line first, CRLF line ends; null is an empty field.' }) },
    'application/x-ndjson': {
      schema: z.string().meta({ description: 'JSON Lines: one JSON object per line, the same fields as the CSV columns.' }),
    },
  },
});

const echoHeader = (description: string, schema: { type: 'string' | 'integer' | 'boolean'; enum?: string[] }) => ({
  description,
  schema,
  required: true,
});

/**
 * Exports for a project's data team (issue 16, docs/data-rights.md), streamed with bounded
 * memory: events from ClickHouse under the plan's window and event scope (as the metrics read
 * them), feedback items and SDK users from PostgreSQL through cursors.
 */
export const exportRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/exports/events',
    auth: 'projectAdmin',
    operationId: 'exportEvents',
    tags: ['Data rights'],
    summary: 'Export the project’s events (CSV, JSON Lines or Parquet)',
    description:
      'Every event of the window, oldest first, with `id`, `event_name`, `user_id`, `properties` (the JSON text sent; CSV: empty, JSON Lines and Parquet: null when none) and `created_at` ' +
      '(CSV and JSON Lines: ISO 8601 UTC; Parquet: a UTC timestamp in milliseconds). The window and event scope are those of the metrics (SPEC 2.8, 8.3): the window is narrowed to the plan’s ' +
      `allowance, and below Pro only the predefined events (${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')}) are exported; the response headers say what applied. ` +
      'Streamed with bounded memory; a client that disconnects stops the query.',
    params: ProjectPath,
    query: EventsExportQuery,
    responses: {
      200: {
        description: 'The events, streamed.',
        headers: {
          ...exportHeaders,
          'X-Event-Scope': echoHeader('`all`, or `predefined_only` when the plan cannot read custom event names.', {
            type: 'string',
            enum: ['all', 'predefined_only'],
          }),
          'X-Date-From': echoHeader('First day of the window applied.', { type: 'string' }),
          'X-Date-To': echoHeader('Last day of the window applied.', { type: 'string' }),
          'X-Retention-Clamped': echoHeader('`true` when the plan narrowed the requested window.', { type: 'boolean' }),
          'X-Retention-Window-Days': echoHeader('The plan’s window in days.', { type: 'integer' }),
        },
        content: {
          'text/csv': { schema: z.string().meta({ description: 'CSV with a header line (ClickHouse CSVWithNames).' }) },
          'application/x-ndjson': { schema: z.string().meta({ description: 'One JSON object per line (ClickHouse JSONEachRow).' }) },
          'application/vnd.apache.parquet': { schema: z.string().meta({ format: 'binary', description: 'One Parquet file.' }) },
        },
      },
      400: error('An invalid `format`, date or range (the reason names it), or a parameter given twice.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { clickhouse, config }, { project, query }) => {
      const window = exportWindow(query, project.plan);
      const allNames = PLAN_LIMITS[project.plan].customEventsReadable;
      // Embedded chDB materializes every result: page through the table there (src/olap/data-rights/exports.ts).
      const streaming = config.clickhouseUrl !== undefined;
      const body = await startedStream(
        exportEvents(
          clickhouse,
          { projectId: project.id, start: window.start, end: window.end, names: allNames ? null : [...PREDEFINED_EVENTS] },
          query.format,
          { streaming, signal: abortOnClose(ctx) },
        ),
      );
      // What ran, as the metrics echo it (SPEC 2.8).
      ctx.set({
        'X-Event-Scope': allNames ? 'all' : 'predefined_only',
        'X-Date-From': window.dateFrom,
        'X-Date-To': window.dateTo,
        'X-Retention-Clamped': String(window.retentionClamped),
        'X-Retention-Window-Days': String(window.retentionWindowDays),
      });
      attachment(ctx, query.format, `events-${project.id}-${window.dateFrom}-${window.dateTo}`);
      ctx.body = body;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/exports/feedbacks',
    auth: 'projectAdmin',
    operationId: 'exportFeedbacks',
    tags: ['Data rights'],
    summary: 'Export the project’s feedback items (CSV or JSON Lines)',
    description:
      'Every item, merged ones too, oldest first: `id`, `title`, `description`, `status`, `category`, `user_id`, `user_email`, `vote_count`, `total_mrr`, `comment_count`, ' +
      '`merged_into_id`, `merged_at`, `rejection_reason`, `created_at`, `updated_at` (times ISO 8601 UTC with microseconds). Read through a PostgreSQL cursor.',
    params: ProjectPath,
    query: TableExportQuery,
    responses: {
      200: textExport('The feedback items'),
      400: error('An invalid `format`.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      const { format } = query;
      const body = await startedStream(encodeRows(feedbackExportBatches(sql, project.id), FEEDBACK_EXPORT_COLUMNS, format));
      attachment(ctx, format, `feedbacks-${project.id}`);
      ctx.body = body;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/exports/users',
    auth: 'projectAdmin',
    operationId: 'exportSdkUsers',
    tags: ['Data rights'],
    summary: 'Export the project’s SDK users (CSV or JSON Lines)',
    description:
      'Every SDK user, first registered first: `id`, `user_id`, `mrr`, `first_seen_at`, `last_seen_at`, `email`, `name` (the last two as registered, docs/clients.md). Read through a PostgreSQL cursor.',
    params: ProjectPath,
    query: TableExportQuery,
    responses: {
      200: textExport('The SDK users'),
      400: error('An invalid `format`.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      const { format } = query;
      const body = await startedStream(encodeRows(sdkUserExportBatches(sql, project.id), SDK_USER_EXPORT_COLUMNS, format));
      attachment(ctx, format, `users-${project.id}`);
      ctx.body = body;
    },
  }),
];
