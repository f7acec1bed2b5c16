import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Router, type RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import { adminAuth, apiKeyAuth, operatorAuth } from './auth.js';
import type { ApiDeps } from './deps.js';
import { ADMIN_TOKEN, API_KEY, OPERATOR_TOKEN, PUBLIC, type Route } from './shared/building-blocks.js';
import type { AppState, RequestContext } from './state.js';

/*
 * One declaration per endpoint: method, path, credential, request schemas, responses and handler
 * in one object. The app registers it on Koa (routesRouter) and the OpenAPI document reads the same
 * object (registerRoutes), so the two cannot drift apart. A resource folder exports its list from
 * <resource>.routes.ts; src/api/routes.ts gathers the lists into the one ordered list (ROUTES) that
 * both app.ts and openapi/document.ts read.
 */

/** Which credential a route takes; it picks both the Koa middleware and the OpenAPI security. */
export type RouteAuth =
  | 'public'
  /** X-API-Key, charged to the key's general budget. */
  | 'apiKey'
  /** X-API-Key, secret or publishable (a web page's pk_…, docs/widget.md), charged to the key's general budget. */
  | 'clientKey'
  /** X-API-Key, secret or publishable, charged to the key's ingestion budget (events). */
  | 'ingestKey'
  /** The account's admin token (owner or team member). */
  | 'adminToken'
  /** The operator token. */
  | 'operatorToken';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * What a handler is given besides its request: the HTTP layer's dependencies as app.ts completes
 * them, and the OpenAPI document the app serves. The document is handed in rather than imported:
 * it is built from every route, the docs route included (openapi/document.ts).
 */
export type RouteDeps = ApiDeps & {
  /** The OpenAPI document as YAML, generated on first use and kept for the app's life. */
  openApiYaml: () => string;
};

/**
 * The handler of a route: the request's context and the HTTP layer's dependencies. It is called
 * as it is, with no wrapper of its own per request: registering it costs one closure per route,
 * once, when the app is built.
 */
export type RouteHandler = (ctx: RequestContext, deps: RouteDeps) => unknown;

type Documentation = Pick<RouteConfig, 'operationId' | 'tags' | 'summary' | 'description' | 'servers' | 'responses'>;

export type RouteDefinition = Documentation & {
  method: HttpMethod;
  /** Koa's spelling (`/projects/:id`); the document gets OpenAPI's (`/projects/{id}`). */
  path: string;
  auth: RouteAuth;
  /** Path parameters, query and body as the document describes them. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** Request headers worth documenting (e.g. Content-Encoding, X-Sent-At). */
  headers?: z.ZodObject;
  body?: NonNullable<RouteConfig['request']>['body'];
  /**
   * Where the app serves it: under /api/v1 when absent; `root` outside it (health, the docs page);
   * `rootAndApi` at both (the OpenAPI document). Routes outside /api/v1 are matched before the
   * API's and get no 405 for another method (app.ts).
   */
  mount?: 'root' | 'rootAndApi';
  /**
   * The ingestion hot path: also matched by a router of its own, before every other route, so a
   * request is tried against two patterns instead of every route's (BENCHMARKS.md, "BullMQ request
   * path"). It stays in the API's router too, which answers its other methods with 405.
   */
  hotPath?: true;
  /**
   * A client app's route that web pages call (SPEC part 4 and /events/batch): it answers CORS
   * preflights and sends CORS headers (cors/client-cors.ts), and the document lists its preflight.
   */
  cors?: true;
  handler: RouteHandler;
};

/**
 * A value made once per app (per dependencies object), on first use: what a route keeps across
 * requests, such as a query gate. One WeakMap lookup per call.
 */
export function perApp<T>(make: (deps: ApiDeps) => T): (deps: ApiDeps) => T {
  const made = new WeakMap<ApiDeps, T>();
  return (deps) => {
    let value = made.get(deps);
    if (value === undefined) {
      value = make(deps);
      made.set(deps, value);
    }
    return value;
  };
}

/** Declares a route; the identity, typed, so a resource's list is checked where it is written. */
export function defineRoute(definition: RouteDefinition): RouteDefinition {
  return definition;
}

const SECURITY: Record<RouteAuth, RouteConfig['security']> = {
  public: PUBLIC,
  apiKey: API_KEY,
  clientKey: API_KEY,
  ingestKey: API_KEY,
  adminToken: ADMIN_TOKEN,
  operatorToken: OPERATOR_TOKEN,
};

/** `/projects/:id/users/:userId` → `/projects/{id}/users/{userId}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The routes in the document, in the order given. */
export function registerRoutes(route: Route, routes: readonly RouteDefinition[]) {
  for (const {
    method,
    path,
    auth,
    params,
    query,
    headers,
    body,
    mount: _mount,
    hotPath: _hotPath,
    cors: _cors,
    handler: _handler,
    ...documentation
  } of routes) {
    const request =
      params || query || headers || body
        ? { ...(params ? { params } : {}), ...(query ? { query } : {}), ...(headers ? { headers } : {}), ...(body ? { body } : {}) }
        : undefined;
    route({
      method,
      path: openApiPath(path),
      ...documentation,
      security: SECURITY[auth],
      ...(request ? { request } : {}),
    } as RouteConfig);
  }
}

/**
 * A Koa router with the routes, in the order given. Each credential's middleware is built once per
 * app, whichever router its routes are in.
 */
export function routesRouter(deps: RouteDeps, routes: readonly RouteDefinition[], options: { prefix?: string } = {}): Router<AppState> {
  const router = new Router<AppState>(options.prefix ? { prefix: options.prefix } : {});
  const auth = credentialsOf(deps);
  for (const { method, path, auth: credential, handler } of routes) {
    const run: RouterMiddleware<AppState> = (ctx) => handler(ctx, deps) as Promise<void> | void;
    const check = auth[credential]();
    router.register(path, [method.toUpperCase()], check ? [check, run] : [run]);
  }
  return router;
}

type CredentialMiddleware = Record<RouteAuth, () => RouterMiddleware<AppState> | undefined>;

/** The middleware of each credential, made once per app on first use. */
const credentialsOf = perApp(credentialMiddleware);

function credentialMiddleware(deps: ApiDeps): CredentialMiddleware {
  const once = <T>(make: () => T) => {
    let made: T | undefined;
    return () => {
      made ??= make();
      return made;
    };
  };
  return {
    public: () => undefined,
    apiKey: once(() => apiKeyAuth(deps.projectKeys) as RouterMiddleware<AppState>),
    clientKey: once(() => apiKeyAuth(deps.projectKeys, { acceptsPublishableKey: true }) as RouterMiddleware<AppState>),
    ingestKey: once(() => apiKeyAuth(deps.projectKeys, { budget: 'ingest', acceptsPublishableKey: true }) as RouterMiddleware<AppState>),
    adminToken: once(() => adminAuth(deps.sql) as RouterMiddleware<AppState>),
    operatorToken: once(() => operatorAuth(deps.operatorToken) as RouterMiddleware<AppState>),
  };
}
