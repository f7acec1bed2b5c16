import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { send } from '@koa/send';
import type { Middleware } from 'koa';
import type { AppState } from '../state.js';
import { UNFRAMED_PAGE_CSP } from './page-csp.js';

/** Where `npm run build:web` (run by `npm install` through `prepare`) puts the dashboard. */
// This file is src/api/web/web-static.ts: three levels below the repository's root.
export const WEB_DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../web/dist');

/** Vite names every file under assets/ by its content hash: a changed file gets a new name. */
const ASSETS_PREFIX = '/assets/';
const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60;
/** The one unhashed file besides index.html (web/public/). */
const FAVICON = '/favicon.svg';

/** The dashboard is framed by nobody (page-csp.ts holds the one policy of every page). */
export const DASHBOARD_CSP = UNFRAMED_PAGE_CSP;

const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // A token never travels in a URL, and no URL of the dashboard is sent to other sites.
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

/**
 * The app's own pages (web/src/app.tsx): index.html answers these, so a shared link opens its
 * page. Any other path keeps the service's JSON 404 (SPEC 7.1), as before the dashboard.
 */
const PAGE_PATHS = [/^\/$/, /^\/signin$/, /^\/projects(?:\/[^.]*)?$/];
const isPagePath = (requestPath: string) => PAGE_PATHS.some((pattern) => pattern.test(requestPath));

/** Paths the dashboard never answers: the API and the service's own documents keep their 404s. */
function isServicePath(requestPath: string, apiPrefix: string): boolean {
  return (
    requestPath === apiPrefix ||
    requestPath.startsWith(`${apiPrefix}/`) ||
    requestPath.startsWith('/openapi/') ||
    requestPath === '/docs' ||
    requestPath.startsWith('/docs/')
  );
}

export type WebStaticOptions = { apiPrefix: string; distDir?: string };

/**
 * Serves the owners' dashboard (web/) at `/`: hashed files under /assets/ cached for a year as
 * immutable; the app's page paths get index.html, uncached, so a shared link to any page of the
 * single-page app opens it, and a new deployment is picked up at the next load. Registered after
 * the API's routers: it only sees requests none of them answered.
 */
export function webStatic({ apiPrefix, distDir = WEB_DIST_DIR }: WebStaticOptions): Middleware<AppState> {
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || isServicePath(ctx.path, apiPrefix)) return next();
    if (ctx.path.startsWith(ASSETS_PREFIX)) {
      ctx.set(SECURITY_HEADERS);
      await send(ctx, ctx.path, {
        root: distDir,
        maxage: ONE_YEAR_SECONDS * 1000,
        immutable: true,
        index: false,
        gzip: true,
        brotli: true,
      });
      return;
    }
    if (ctx.path === FAVICON) {
      ctx.set(SECURITY_HEADERS);
      await send(ctx, ctx.path, { root: distDir, maxage: 24 * 60 * 60 * 1000, index: false });
      return;
    }
    if (!isPagePath(ctx.path)) return next();
    ctx.set(SECURITY_HEADERS);
    if (!existsSync(path.join(distDir, 'index.html'))) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = 'The dashboard is not built yet: run `npm run build:web` (npm install does it too).\n';
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    await send(ctx, 'index.html', { root: distDir, index: false, gzip: true, brotli: true });
  };
}
