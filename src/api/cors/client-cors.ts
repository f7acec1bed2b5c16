import type { Middleware } from 'koa';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { forbidden } from '../errors.js';
import type { AppState, RequestContext } from '../state.js';

/**
 * CORS for the routes a client app calls with its API key (SPEC part 4: feedback, votes,
 * comments, user registration, event tracking and batches), so a web page can call them. The
 * key is the credential, not a cookie: any origin is answered by default and no credentials are
 * allowed. A project may restrict its key to listed origins (`allowed_origins`), which only the
 * authenticated request can know: a preflight carries no key, so it is answered for any origin
 * and the actual request is refused by `refuseUnlistedOrigin`. Owner (/projects…, /account) and
 * operator (/admin…) routes get no CORS headers at all, so a browser keeps other sites from
 * reading them.
 */

export const CORS_ALLOWED_HEADERS = 'X-API-Key, X-User-Id, X-User-Token, Content-Type, Content-Encoding';
export const CORS_ALLOWED_METHODS = 'GET, POST, DELETE';
/** Headers a page may read: the back-off signals of 429, 503 and the rate limiter. */
export const CORS_EXPOSED_HEADERS = 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset';
/** A day: browsers cap it lower (Chromium 2 h), and the answer never depends on the project. */
export const CORS_MAX_AGE_SECONDS = 86_400;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The client routes' paths under the API prefix (SPEC part 4 plus /events/batch: the routes marked
 * `cors`), as one pattern: `/feedbacks/:id/votes` → `^/api/v1/(?:…|feedbacks/[^/]+/votes|…)$`.
 */
export function clientRoutePattern(apiPrefix: string, paths: readonly string[]): RegExp {
  const alternatives = [...new Set(paths)].map((path) =>
    path
      .slice(1)
      .split('/')
      .map((segment) => (segment.startsWith(':') ? '[^/]+' : escapeRegExp(segment)))
      .join('/'),
  );
  return new RegExp(`^${escapeRegExp(apiPrefix)}/(?:${alternatives.join('|')})$`);
}

/**
 * Runs before the rate limiter and the body parsers: a preflight is answered here (it has no key
 * to charge), and every later answer of a client route (401, 429 and 503 included) carries the
 * headers that let the page read it. A request without an Origin header (a server, a mobile app:
 * every POST /events/track of the benchmark) costs one header lookup; a GET without one also gets
 * `Vary: Origin`, so that a cache never hands its answer to a page of another origin.
 */
export function clientCors(apiPrefix: string, clientPaths: readonly string[], publicUrl?: string): Middleware<AppState> {
  const clientRoute = clientRoutePattern(apiPrefix, clientPaths);
  const serviceOrigin = publicUrl === undefined ? undefined : originOf(publicUrl);
  return (ctx, next) => {
    const origin = ctx.req.headers.origin;
    if (origin === undefined) {
      if (ctx.method === 'GET' && clientRoute.test(ctx.path)) ctx.vary('Origin');
      return next();
    }
    if (!clientRoute.test(ctx.path)) return next();
    if (serviceOrigin !== undefined) ctx.state.serviceOrigin = serviceOrigin;
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', origin);
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS);
      ctx.set('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS);
      ctx.set('Access-Control-Max-Age', String(CORS_MAX_AGE_SECONDS));
      ctx.status = 204;
      return;
    }
    ctx.set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
    return next();
  };
}

/**
 * 403 (SPEC 7.1 body) when the key's project lists its origins and the request comes from a
 * page of another one. Without an Origin header there is no page to refuse: servers and apps
 * are not browsers, and the key stays their credential.
 */
export function refuseUnlistedOrigin(ctx: RequestContext, project: ProjectWithPlan): void {
  const allowed = project.allowed_origins;
  if (allowed.length === 0) return;
  const origin = ctx.req.headers.origin;
  if (origin === undefined || allowed.includes(origin)) return;
  // The service's own pages (the widget's panel, the public board: docs/widget.md) call it from
  // its own origin; their framing is held to the allowed origins by their CSP instead.
  if (isServiceOrigin(ctx, origin)) return;
  throw forbidden(`origin ${origin} is not allowed for this project's API key (allowed_origins)`);
}

/**
 * Whether an Origin is the service's own: scheme, host and port all equal to the request's own
 * (its connection's scheme and its Host), or to PUBLIC_URL's origin (the address behind a proxy
 * that ends TLS). The host alone is not enough: `https://host` and `http://host` are two origins,
 * and a page on the other scheme is another site's (issue 33).
 */
function isServiceOrigin(ctx: RequestContext, origin: string): boolean {
  if (ctx.state.serviceOrigin !== undefined && origin === ctx.state.serviceOrigin) return true;
  return origin === originOf(`${ctx.protocol}://${ctx.host}`);
}

/** The origin of a URL as a browser would send it, or undefined when it is none. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}
