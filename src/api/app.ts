import Koa from 'koa';
import { API_PREFIX } from './api-prefix.js';
import { CLICKHOUSE_PATH, createClickhouseHandler } from './clickhouse/ch-interface.js';
import { withInterfaceLog } from './clickhouse/ch-request-log.js';
import { clientCors } from './cors/client-cors.js';
import { endpointPreflight } from './cors/endpoint-cors.js';
import { type RouteDefinition, type RouteDeps, routesRouter } from './define-route.js';
import type { ApiDeps } from './deps.js';
import { OPENAPI_PATH } from './docs/docs.routes.js';
import { AppError } from './errors.js';
import { LocalLiveFeed } from './live/live-feed.js';
import { publishingSink } from './live/publishing-sink.js';
import { encodedQuery } from './middleware/encoded-query.js';
import { errorHandler } from './middleware/errors.js';
import { hotPathRoutes } from './middleware/hot-path.js';
import { BATCH_BODY_LIMIT_BYTES, BODY_LIMIT_BYTES, jsonBody } from './middleware/json-body.js';
import { rateLimiting } from './middleware/rate-limit.js';
import { requestLog } from './middleware/request-log.js';
import { securityHeaders } from './middleware/security-headers.js';
import { storableInput } from './middleware/storable-input.js';
import { openApiYaml } from './openapi/document.js';
import { ROUTES } from './routes.js';
import type { AppState } from './state.js';
import { embedPages } from './web/embed-pages.js';
import { webStatic } from './web/web-static.js';

/** Builds the Koa application from its dependencies; it opens no connection itself. */
export function buildApp(given: ApiDeps): Koa<AppState> {
  // The live view's source (docs/insights.md): the process's own, or one in memory (a single process).
  const deps: ApiDeps = given.liveFeed ? given : { ...given, liveFeed: new LocalLiveFeed() };
  const app = new Koa<AppState>({ proxy: false });
  app.silent = true; // errors are logged by errorHandler, once, with the request id

  // What the handlers get. The live view's hook: the events routes' sink also hands acknowledged
  // events to the feed (no other route submits events). The OpenAPI document is made on first use.
  let yaml: string | undefined;
  const routeDeps: RouteDeps = {
    ...deps,
    eventSink: publishingSink(deps.eventSink, deps.liveFeed ?? new LocalLiveFeed()),
    openApiYaml: () => {
      yaml ??= openApiYaml();
      return yaml;
    },
  };
  // The ingestion routes, the hot path, are answered first by their exact path and method, with
  // no router (middleware/hot-path.ts; BENCHMARKS.md, "Issue 31: request cost"). They stay in
  // `api` too, which answers their other methods with 405.
  const ingest = hotPathRoutes(
    routeDeps,
    ROUTES.filter((route) => route.hotPath),
    API_PREFIX,
  );
  const api = routesRouter(
    routeDeps,
    ROUTES.filter((route) => route.mount === undefined),
    { prefix: API_PREFIX },
  );
  // Health checks and SPEC 9's OpenAPI document (also under the prefix) and docs page, without auth.
  const root = routesRouter(routeDeps, ROUTES.flatMap(atRoot));

  app.use(securityHeaders());
  app.use(requestLog(deps.logger, deps.telemetry));
  app.use(errorHandler(deps.logger));
  app.use(async (ctx, next) => {
    // A request dispatched while the server shuts down may sit on a connection that is about
    // to be closed: it must not store anything its client may never hear about.
    if (deps.lifecycle?.stopping) {
      ctx.set('Connection', 'close');
      throw new AppError(503, 'the service is shutting down, retry', { 'Retry-After': '1' });
    }
    await next();
  });
  // `/feedbacks%3Fstatus=…` as `/feedbacks?status=…` (the origin's Swift SDK), before anything reads the path.
  app.use(
    encodedQuery(
      ROUTES.filter((route) => route.mount === undefined && !route.path.includes(':')).map((route) => `${API_PREFIX}${route.path}`),
    ),
  );
  // The read-only ClickHouse HTTP interface (docs/clickhouse-interface.md) under /clickhouse: it
  // speaks ClickHouse's protocol (its own auth, errors and limits), so it answers before the
  // API's CORS, limiter and body parsers, which would answer in the API's form.
  const clickhouse = deps.clickhouseInterface ?? withInterfaceLog(createClickhouseHandler(deps, deps.logger), deps.logger, deps.telemetry);
  app.use(async (ctx, next) => {
    if (ctx.path !== CLICKHOUSE_PATH && !ctx.path.startsWith(`${CLICKHOUSE_PATH}/`)) return next();
    ctx.respond = false;
    // Koa does not answer a request it was told not to: an error escaping the handler is answered here.
    await clickhouse(ctx.req, ctx.res, ctx.path.slice(CLICKHOUSE_PATH.length) || '/').catch((error: unknown) => {
      deps.logger.error({ err: error, requestId: ctx.state.requestId, path: ctx.path }, 'ClickHouse interface: request handler threw');
      if (ctx.res.headersSent) ctx.res.destroy();
      else ctx.res.writeHead(500, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Internal error of the service\n');
    });
  });
  // CORS of the client routes, before the limiter: a preflight has no key to charge, and a 429
  // must be readable by the page that gets it.
  // The preflight of a published query (GET /q/:id), by the endpoint's own origins (endpoints.routes.ts).
  const preflight = endpointPreflight();
  app.use((ctx, next) => preflight(ctx, next, deps));
  app.use(
    clientCors(
      API_PREFIX,
      ROUTES.filter((route) => route.cors).map((route) => route.path),
      deps.config.delivery.publicUrl,
    ),
  );
  // Every authenticated route is rate limited; health checks and the OpenAPI document are not.
  // Before the body parsers, so that a refused IP's body is never read.
  const isLimited = (path: string) => path.startsWith(`${API_PREFIX}/`) && path !== `${API_PREFIX}${OPENAPI_PATH}`;
  app.use(rateLimiting(deps.rateLimits, isLimited));
  // SDK batches may be larger than any other body.
  const batchBody = jsonBody(BATCH_BODY_LIMIT_BYTES);
  const defaultBody = jsonBody(BODY_LIMIT_BYTES);
  // Unsubscribe POSTs carry whatever a form or a mail client's one-click sends (RFC 8058:
  // `List-Unsubscribe=One-Click`, form-encoded or multipart) and the route reads none of it, so
  // no body is parsed there: a mislabelled one must not turn an unsubscribe into a 400.
  const unsubscribePath = `${API_PREFIX}/unsubscribe/`;
  // Deferred: the route's auth middleware (auth.ts) reads the body once the credential is
  // accepted, so a request with a missing or wrong key gets its 401 without its body being read
  // or parsed (Node discards the unread rest after the answer). Every route with a body has auth.
  // Strings no store can hold (lone surrogates, NUL) are refused on every route: in the path and
  // the query here, in the body as soon as it is read.
  const metricsRoute = new RegExp(`^${API_PREFIX}/(projects/[^/]+/)?metrics/`);
  const storable = storableInput((path) => metricsRoute.test(path));
  app.use((ctx, next) => {
    if (ctx.path.startsWith(unsubscribePath)) return next();
    // A batch's events are checked one by one by its route (events.routes.ts): an unstorable
    // string rejects its event, not the batch.
    const isBatch = ctx.path === `${API_PREFIX}/events/batch`;
    const parser = isBatch ? batchBody : defaultBody;
    ctx.state.readBody = async () => {
      await parser(ctx, async () => {});
      if (!isBatch) storable.checkBody(ctx);
    };
    return next();
  });
  app.use(storable.checkPath);
  app.use(storable.checkQuery);
  app.use(ingest);
  app.use(root.routes());
  app.use(api.routes());
  // A known path with another method: 405 with Allow (routes of all routers are known here).
  app.use(api.allowedMethods());
  app.use(embedPages({ sql: deps.sql, publicUrl: deps.config.delivery.publicUrl })); // the widget's loader and panel, the public board (web/)
  app.use(webStatic({ apiPrefix: API_PREFIX })); // the owners' dashboard at `/` (web/)
  return app;
}

/** A route's registrations outside the prefixed router: none, at the root, or also under the prefix. */
function atRoot(route: RouteDefinition): RouteDefinition[] {
  if (route.mount === 'root') return [route];
  if (route.mount === 'rootAndApi') return [route, { ...route, path: `${API_PREFIX}${route.path}` }];
  return [];
}
