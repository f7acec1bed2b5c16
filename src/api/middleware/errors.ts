import type { Middleware } from 'koa';
import type { Logger } from '../../core/logger.js';
import { MetricsError, type MetricsErrorBody } from '../../olap/metrics/metrics.errors.js';
import { AppError, errorBodyOf } from '../errors.js';
import type { AppState } from '../state.js';

/**
 * The one place that turns a thrown error into a response. A MetricsError gets the metrics
 * body `{ error: { code, message } }` (SPEC 7.2); AppError carries its status and reason (and the same text as `message`, docs/clients.md); errors of Koa's own stack (such as a 405) keep their 4xx status;
 * anything else is a 500 whose details go to the log, never to the client.
 */
export function errorHandler(logger: Logger): Middleware<AppState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(404, `no route for ${ctx.method} ${ctx.path}`);
      }
      // The router's answer for a known path and another method (405) or an unknown method (501):
      // its Allow header stays, the body gets the SPEC 7.1 shape.
      if ((ctx.status === 405 || ctx.status === 501) && !ctx.body) {
        ctx.body = errorBodyOf(`${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`);
      }
    } catch (error) {
      if (error instanceof MetricsError) {
        ctx.status = error.status;
        ctx.body = { error: { code: error.code, message: error.message } } satisfies MetricsErrorBody;
        return;
      }
      const { status, reason, headers } = classify(error);
      if (status >= 500) {
        logger.error({ err: error, requestId: ctx.state.requestId, method: ctx.method, path: ctx.path }, 'request failed');
      }
      ctx.status = status;
      ctx.set(headers);
      ctx.body = errorBodyOf(reason);
    }
  };
}

function classify(error: unknown): { status: number; reason: string; headers: Record<string, string> } {
  if (error instanceof AppError) return { status: error.status, reason: error.reason, headers: error.headers };
  const httpError = error as { status?: unknown; expose?: unknown; type?: unknown; message?: unknown; headers?: unknown };
  const status = typeof httpError.status === 'number' ? httpError.status : 500;
  if (status >= 400 && status < 500) {
    const headers = httpError.headers && typeof httpError.headers === 'object' ? (httpError.headers as Record<string, string>) : {};
    const reason = httpError.expose && typeof httpError.message === 'string' ? httpError.message : 'bad request';
    return { status, reason, headers };
  }
  return { status: 500, reason: 'internal server error', headers: {} };
}
