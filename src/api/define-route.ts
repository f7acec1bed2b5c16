import type { RouteConfig } from '@asteasolutions/zod-to-openapi';
import { Router, type RouterMiddleware } from '@koa/router';
import type { z } from 'zod';
import type { ProjectWithPlan } from '../oltp/projects.repo.js';
import { adminAuth, apiKeyAuth, operatorAuth } from './auth.js';
import type { ApiDeps } from './deps.js';
import { parseMetricsBody, parseMetricsQuery } from './metrics-input.js';
import { type ProjectRules, projectOfRoute } from './project-access.js';
import {
  ADMIN_TOKEN,
  API_KEY,
  type BodyValidator,
  bodyValidator,
  OPERATOR_TOKEN,
  PUBLIC,
  projectResponses,
  type RequestBody,
  type Route,
} from './shared/building-blocks.js';
import type { AppState, RequestContext } from './state.js';
import { parseBody, parseHeaders, parseParams, parseQuery } from './validation.js';

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
  /**
   * The account's admin token on a route of one of its projects (`/projects/:id…`): the project is
   * loaded before the input is read (404 no such project, 403 another account's or suspended), the
   * route's `projectRules` are checked, and the handler gets it as `input.project`. The document
   * gets the shared 401/403/404 responses (projectResponses) wherever the route states none.
   */
  | 'projectAdmin'
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

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type BodyOf<B> = B extends RequestBody<infer T> ? T : undefined;

/**
 * A handler's validated input: the path parameters, query, headers and body, each parsed by the
 * schema the route declares (undefined where it declares none), and on a `projectAdmin` route the
 * project.
 */
export type RouteInput<A extends RouteAuth, P, Q, H, B> = {
  params: Parsed<P>;
  query: Parsed<Q>;
  headers: Parsed<H>;
  body: BodyOf<B>;
  project: A extends 'projectAdmin' ? ProjectWithPlan : undefined;
};

/**
 * How a route family reads its query when the SPEC 7.1 body is not its refusal: the metrics
 * routes' reader answers in the metrics body, parameter by parameter as the planner reads them.
 */
export type QueryReader = (ctx: RequestContext, schema: z.ZodObject) => unknown;

type Documentation = Pick<RouteConfig, 'operationId' | 'tags' | 'summary' | 'description' | 'servers'>;

export type RouteSpec<A extends RouteAuth, P, Q, H, B> = Documentation & {
  method: HttpMethod;
  /** Koa's spelling (`/projects/:id`); the document gets OpenAPI's (`/projects/{id}`). */
  path: string;
  auth: A;
  /** On a `projectAdmin` route: what it asks of the project and the token beyond ownership. */
  projectRules?: A extends 'projectAdmin' ? ProjectRules : never;
  /**
   * Path parameters. A value its schema refuses is a 404 whose reason is the schema's message
   * (`feedback not found`): a malformed id names nothing, like a missing one.
   */
  params?: P;
  /** The query, read under its documented names (validation.ts, readQuery); a refusal is a 400. */
  query?: Q;
  /**
   * Whose body the input's refusals take: the SPEC 7.1 body (absent), or the metrics error body
   * (SPEC 7.2) of the metrics family (metrics-input.ts), as the insights routes answer.
   */
  errorBody?: 'metrics';
  /** A query reader of its own, for a family that reads parameters as its planner asks for them (metrics). */
  queryReader?: QueryReader;
  /** Request headers worth documenting (e.g. Content-Encoding, X-Sent-At); validated too. */
  headers?: H;
  /** The JSON body (building-blocks' `body()`), validated by the schema it was made of; a refusal is a 400 naming the field. */
  body?: B;
  /** The responses; a `projectAdmin` route gets projectResponses for the statuses it leaves out. */
  responses: RouteConfig['responses'];
  /**
   * Where the app serves it: under /api/v1 when absent; `root` outside it (health, the docs page);
   * `rootAndApi` at both (the OpenAPI document). Routes outside /api/v1 are matched before the
   * API's and get no 405 for another method (app.ts).
   */
  mount?: 'root' | 'rootAndApi';
  /**
   * The ingestion hot path: also answered by its exact path and method before any router
   * (middleware/hot-path.ts), so a request is not tried against every route's pattern (BENCHMARKS.md,
   * "Issue 31: request cost"). It stays in the API's router too, which answers its other methods
   * with 405. Its handler
   * is called as it is and checks its own input, with a compiled validator derived from the same
   * schemas (events/event-check.ts); the declared schemas describe it.
   */
  hotPath?: true;
  /**
   * A client app's route that web pages call (SPEC part 4 and /events/batch): it answers CORS
   * preflights and sends CORS headers (cors/client-cors.ts), and the document lists its preflight.
   */
  cors?: true;
  /** The handler: the request's context, the HTTP layer's dependencies and the validated input. */
  handler: (ctx: RequestContext, deps: RouteDeps, input: RouteInput<A, P, Q, H, B>) => unknown;
};

/** A route as the lists hold it, whatever its input's types. */
export type RouteDefinition = Omit<
  RouteSpec<RouteAuth, z.ZodObject | undefined, z.ZodObject | undefined, z.ZodObject | undefined, RequestBody<unknown> | undefined>,
  'handler' | 'projectRules'
> & {
  projectRules?: ProjectRules;
  handler: (ctx: RequestContext, deps: RouteDeps, input: never) => unknown;
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

/**
 * Declares a route. The identity at run time; typed, so a resource's list is checked where it is
 * written, and the handler's `input` has the types of the schemas declared beside it.
 */
export function defineRoute<
  A extends RouteAuth,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  H extends z.ZodObject | undefined = undefined,
  B extends RequestBody<unknown> | undefined = undefined,
>(definition: RouteSpec<A, P, Q, H, B>): RouteDefinition {
  return definition as unknown as RouteDefinition;
}

const SECURITY: Record<RouteAuth, RouteConfig['security']> = {
  public: PUBLIC,
  apiKey: API_KEY,
  clientKey: API_KEY,
  ingestKey: API_KEY,
  adminToken: ADMIN_TOKEN,
  projectAdmin: ADMIN_TOKEN,
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
    responses,
    projectRules,
    queryReader: _queryReader,
    errorBody: _errorBody,
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
      responses: auth === 'projectAdmin' ? { ...projectResponses(projectRules), ...responses } : responses,
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
  for (const route of routes) {
    const check = auth[route.auth]();
    router.register(route.path, [route.method.toUpperCase()], check ? [check, runner(route, deps)] : [runner(route, deps)]);
  }
  return router;
}

/** The input of a route that reads none (and of the hot path, which checks its own). */
export const NO_INPUT = Object.freeze({ params: undefined, query: undefined, headers: undefined, body: undefined, project: undefined });

/**
 * The middleware that calls a route's handler: with the input read from its declaration, or, for
 * a route that declares none and for the hot path, the handler as it is with no wrapper of its own
 * per request (one closure per route, made once when the app is built).
 */
function runner(route: RouteDefinition, deps: RouteDeps): RouterMiddleware<AppState> {
  const handler = route.handler as (ctx: RequestContext, deps: RouteDeps, input: typeof NO_INPUT) => Promise<void> | void;
  const readInput = route.hotPath ? undefined : inputReader(route);
  if (!readInput) return (ctx) => handler(ctx, deps, NO_INPUT);
  return async (ctx) => handler(ctx, deps, await readInput(ctx, deps));
}

type ReadInput = (ctx: RequestContext, deps: RouteDeps) => Promise<typeof NO_INPUT>;

/**
 * Reads a route's input from what it declares, in a fixed order, each refusal in the body of the
 * route's family: the project of a `projectAdmin` route (404, 403, then its rules), the path
 * parameters (404), the query (400, or the family's reader), the headers (400), the body (400).
 * The credential's middleware has run before: a caller without one never gets this far.
 */
function inputReader(route: RouteDefinition): ReadInput | undefined {
  const { auth, projectRules, params, query, headers } = route;
  const body = route.body ? bodyValidator(route.body) : undefined;
  if (auth !== 'projectAdmin' && !params && !query && !headers && !body) return undefined;
  const metrics = route.errorBody === 'metrics';
  const readQuery =
    route.queryReader ?? ((ctx: RequestContext, schema: z.ZodObject) => (metrics ? parseMetricsQuery : parseQuery)(schema, ctx.query));
  const parse = metrics ? parseMetricsBody : parseBody;
  return async (ctx, deps) => {
    const project = auth === 'projectAdmin' ? await projectOfRoute(deps.sql, ctx, projectRules) : undefined;
    return {
      params: params ? parseParams(params, ctx.params) : undefined,
      query: query ? readQuery(ctx, query) : undefined,
      headers: headers ? parseHeaders(headers, ctx) : undefined,
      body: body ? readBody(body, ctx.request.body, parse) : undefined,
      project,
    } as typeof NO_INPUT;
  };
}

/** A body as its validator reads it: an optional one left out (none, null, `{}`) is undefined. */
function readBody({ schema, optional }: BodyValidator, raw: unknown, parse: typeof parseBody): unknown {
  if (
    optional &&
    (raw === undefined || raw === null || (typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw).length === 0))
  ) {
    return undefined;
  }
  return parse(schema, raw);
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
    // The same middleware: the project is loaded with the input (inputReader), after the body is read.
    projectAdmin: once(() => adminAuth(deps.sql) as RouterMiddleware<AppState>),
    operatorToken: once(() => operatorAuth(deps.operatorToken) as RouterMiddleware<AppState>),
  };
}
