import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger.js';
import type { Telemetry } from '../../core/telemetry.js';
import type { AppState } from '../state.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, else a new one), returns
 * it, and logs one line when the response is done. Headers are not logged: they carry keys.
 */
export function requestLog(logger: Logger, telemetry?: Telemetry): Middleware<AppState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const given = ctx.get('x-request-id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (telemetry) {
        // Route patterns only: raw paths of unknown routes would make unbounded label values.
        const labels = { method: ctx.method, route: matched ?? 'unmatched', status: String(ctx.status) };
        telemetry.httpRequests.inc(labels);
        telemetry.httpDuration.observe(labels, durationMs / 1000);
      }
      logger.info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route: matched ?? ctx.path,
          status: ctx.status,
          durationMs: Math.round(durationMs * 10) / 10,
          projectId: ctx.state.project?.id,
        },
        'request',
      );
    }
  };
}
