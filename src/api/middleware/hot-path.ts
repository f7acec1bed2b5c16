import type { Middleware } from 'koa';
import { apiKeyAuth } from '../auth.js';
import { NO_INPUT, type RouteDefinition, type RouteDeps } from '../define-route.js';
import type { AppState, RequestContext } from '../state.js';

type HotRoute = { method: string; pattern: string; run: (ctx: RequestContext) => Promise<unknown> };

/**
 * The ingestion routes (`hotPath`: POST /events/track and /events/batch), answered by their exact
 * path and method before any router. @koa/router reads the request's Host, tries every pattern and
 * composes a middleware chain per request; a Map lookup does the same for two fixed paths. Any
 * other spelling (another method, a trailing slash, other letter case) falls through to the API's
 * router, which has these routes too and answers them as before (or with 405).
 *
 * The route's credential is the ingestion key's (`ingestKey`), its handler the route's own; the
 * request log and the telemetry get the route's pattern, as from the router.
 */
export function hotPathRoutes(deps: RouteDeps, routes: readonly RouteDefinition[], prefix: string): Middleware<AppState> {
  const ingestKey = apiKeyAuth(deps.projectKeys, { budget: 'ingest', acceptsPublishableKey: true });
  const byPath = new Map<string, HotRoute>();
  for (const { method, path, auth, handler } of routes) {
    if (auth !== 'ingestKey' || path.includes(':')) {
      throw new Error(`hot path ${path}: only routes with the ingestion key and without parameters are served here`);
    }
    const pattern = `${prefix}${path}`;
    byPath.set(pattern, {
      method: method.toUpperCase(),
      pattern,
      // The hot path's handler checks its own input (events/event-check.ts): it reads none here.
      run: (ctx) =>
        ingestKey(ctx, async () =>
          (handler as (ctx: RequestContext, deps: RouteDeps, input: typeof NO_INPUT) => unknown)(ctx, deps, NO_INPUT),
        ),
    });
  }
  return (ctx, next) => {
    const route = byPath.get(ctx.path);
    if (route === undefined || ctx.method !== route.method) return next();
    (ctx as { _matchedRoute?: string })._matchedRoute = route.pattern;
    return route.run(ctx);
  };
}
