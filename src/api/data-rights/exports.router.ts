import { Router } from '@koa/router';
import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import { exportEvents } from '../../olap/data-rights/exports.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import { type MetricsWindow, resolveWindow } from '../../olap/metrics/window.js';
import { FEEDBACK_EXPORT_COLUMNS, feedbackExportBatches, SDK_USER_EXPORT_COLUMNS, sdkUserExportBatches } from '../../oltp/exports.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest } from '../errors.js';
import type { AppState, RequestContext } from '../state.js';
import { parseQuery } from '../validation.js';
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

/**
 * Exports for a project's data team (issue 16, docs/data-rights.md), streamed with bounded
 * memory: events from ClickHouse under the plan's window and event scope (as the metrics read
 * them), feedback items and SDK users from PostgreSQL through cursors.
 */
export function exportsRouter({ sql, clickhouse, config }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);
  // Embedded chDB materializes every result: page through the table there (src/olap/data-rights/exports.ts).
  const streaming = config.clickhouseUrl !== undefined;

  router.get('/projects/:id/exports/events', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(EventsExportQuery, ctx.query);
    const window = exportWindow(query, project.plan);
    const allNames = PLAN_LIMITS[project.plan].customEventsReadable;
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
  });

  router.get('/projects/:id/exports/feedbacks', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const { format } = parseQuery(TableExportQuery, ctx.query);
    const body = await startedStream(encodeRows(feedbackExportBatches(sql, project.id), FEEDBACK_EXPORT_COLUMNS, format));
    attachment(ctx, format, `feedbacks-${project.id}`);
    ctx.body = body;
  });

  router.get('/projects/:id/exports/users', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const { format } = parseQuery(TableExportQuery, ctx.query);
    const body = await startedStream(encodeRows(sdkUserExportBatches(sql, project.id), SDK_USER_EXPORT_COLUMNS, format));
    attachment(ctx, format, `users-${project.id}`);
    ctx.body = body;
  });

  return router;
}
