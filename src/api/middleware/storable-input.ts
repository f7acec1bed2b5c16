import type { Middleware } from 'koa';
import { MetricsError } from '../../metrics/errors.js';
import { badRequest } from '../errors.js';
import type { AppState } from '../state.js';
import { findUnstorableString } from '../validation.js';

/**
 * Refuses, on every route, a request whose query or JSON body holds a string that PostgreSQL or
 * ClickHouse cannot store (a lone surrogate, NUL), keys included: a 400 naming the field, in the
 * METRICS_* body on metrics routes. One middleware after the body parsers, so that no route,
 * present or future, can pass such a string on to a store, where it would fail a whole batch
 * (ClickHouse) or the request with a 500 (PostgreSQL). Like a body that is not JSON, this is
 * refused before authentication: it is a property of the encoding, not of the caller.
 */
export function storableInput(isMetricsRoute: (path: string) => boolean): Middleware<AppState> {
  return async (ctx, next) => {
    const problem = findUnstorableString(ctx.query, 'query') ?? findUnstorableString(ctx.request.body, 'body');
    if (problem) {
      throw isMetricsRoute(ctx.path) ? new MetricsError('METRICS_INVALID_PARAMETER', problem) : badRequest(problem);
    }
    await next();
  };
}
