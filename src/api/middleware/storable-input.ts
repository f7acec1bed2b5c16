import type Koa from 'koa';
import type { Middleware } from 'koa';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import { badRequest } from '../errors.js';
import type { AppState } from '../state.js';
import { findUnstorableString, unstorableReason } from '../validation.js';

/**
 * Refuses, on every route, a request whose query or JSON body holds a string that PostgreSQL or
 * ClickHouse cannot store (a lone surrogate, NUL), keys included: a 400 naming the field, in the
 * METRICS_* body on metrics routes. Applied to the query before routing and to every body
 * when it is read, so that no route, present or future, can pass such a string on to a store, where it would fail a whole batch
 * (ClickHouse) or the request with a 500 (PostgreSQL). A bad query string is refused before
 * authentication (a property of the encoding, not of the caller); a bad body after it, like any body.
 */
export function storableInput(isMetricsRoute: (path: string) => boolean) {
  const refuse = (ctx: Koa.ParameterizedContext<AppState>, problem: string) => {
    throw isMetricsRoute(ctx.path) ? new MetricsError('METRICS_INVALID_PARAMETER', problem) : badRequest(problem);
  };
  return {
    /**
     * Middleware: the path, before routing. The router percent-decodes each path parameter
     * (`/projects/:id/users/%00` gives a NUL user id), so each segment is decoded the same way
     * and checked here, once for every route: no handler can pass such a parameter to a store.
     */
    checkPath: ((ctx, next) => {
      // Only a percent-encoded segment can decode to NUL; most paths (all of ingestion) have none.
      if (ctx.path.includes('%')) {
        for (const segment of ctx.path.split('/')) {
          const reason = unstorableReason(decodeLikeTheRouter(segment));
          if (reason) refuse(ctx, `path: a segment ${reason}`);
        }
      }
      return next();
    }) satisfies Middleware<AppState>,
    /** Middleware: the query string, before routing. */
    checkQuery: ((ctx, next) => {
      // No query string, nothing to walk (the ingestion routes have none).
      if (ctx.querystring !== '') {
        const problem = findUnstorableString(ctx.query, 'query');
        if (problem) refuse(ctx, problem);
      }
      return next();
    }) satisfies Middleware<AppState>,
    /**
     * The parsed body: called by the deferred body read (app.ts), which runs only once the
     * route's credential is accepted (auth.ts), so an unauthenticated body is never parsed.
     */
    checkBody(ctx: Koa.ParameterizedContext<AppState>): void {
      if (!mayHoldUnstorable(ctx.request.rawBody)) return;
      const problem = findUnstorableString(ctx.request.body, 'body');
      if (problem) refuse(ctx, problem);
    },
  };
}

/** A path segment as @koa/router decodes a parameter: percent-decoded, or as it is when malformed. */
function decodeLikeTheRouter(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Whether the JSON text a body was parsed from can hold a lone surrogate or NUL in any string,
 * keys included; true when the text is unknown. The body parser decodes the bytes as UTF-8, which
 * yields U+FFFD for invalid bytes, never a lone surrogate, and JSON forbids a raw control character
 * such as NUL in a string: both can only come from a `\u` escape. Most bodies have none, and then
 * the walk over every value (measured as a visible share of POST /events/track, BENCHMARKS.md) is
 * skipped.
 */
export function mayHoldUnstorable(rawBody: unknown): boolean {
  return typeof rawBody !== 'string' || rawBody.includes('\\u');
}
