import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import { type Logger, requestLineLogger } from '../../core/logger.js';
import type { Telemetry } from '../../core/telemetry.js';
import type { AppState } from '../state.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Gives every request an id (the caller's X-Request-Id when it is sane, else a new one), returns
 * it, and logs one line when the response is done. Headers are not logged: they carry keys.
 *
 * Every request passes here, so it does no work it does not need (BENCHMARKS.md, "BullMQ request
 * path" and "Issue 31: request cost"): the log line's object is built only when the level logs it,
 * the clock is a double (performance.now), not a BigInt, and the line is written by the request-line
 * logger (core/logger.ts): without the redaction paths (its fields are fixed here and none is a
 * secret; matching the wildcard paths cost 40 % of the line, about 3 of 7 µs), and buffered, so
 * lines go out in one write per few dozen requests instead of one each.
 */
export function requestLog(logger: Logger, telemetry?: Telemetry): Middleware<AppState> {
  const requests = requestLineLogger(logger);
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.get('x-request-id');
    const requestId = given !== '' && REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const durationMs = performance.now() - started;
      const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (telemetry) {
        // Route patterns only: raw paths of unknown routes would make unbounded label values.
        const labels = { method: ctx.method, route: matched ?? 'unmatched', status: String(ctx.status) };
        telemetry.httpRequests.inc(labels);
        telemetry.httpDuration.observe(labels, durationMs / 1000);
      }
      if (requests.isLevelEnabled('info')) {
        requests.info(
          {
            requestId,
            method: ctx.method,
            route: matched ?? ctx.path,
            status: ctx.status,
            durationMs: Math.round(durationMs * 10) / 10,
            projectId: ctx.state.project?.id,
          },
          'request',
        );
      }
    }
  };
}
