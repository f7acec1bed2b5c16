import { existsSync } from 'node:fs';
import path from 'node:path';
import { send } from '@koa/send';
import type { Middleware } from 'koa';
import { listPublishedEntries } from '../../oltp/changelog.repo.js';
import type { Sql } from '../../oltp/db.js';
import { framingOriginsByBoardSlug, framingOriginsByPublishableKey, publicBoardProject } from '../../oltp/embed-framing.repo.js';
import { isExactOrigin } from '../cors/allowed-origins.schema.js';
import type { AppState, RequestContext } from '../state.js';
import { changelogAtom } from './changelog-feed.js';
import { pageCsp, UNFRAMED_PAGE_CSP } from './page-csp.js';
import { WEB_DIST_DIR } from './web-static.js';

/**
 * The pages other sites show (docs/widget.md): the loader GET /widget.js, the widget's panel
 * GET /widget?key=pk_… (the loader's iframe) and the public board GET /board/<slug>[/…]. Their
 * hashed scripts and styles are the dashboard's /assets/ (web-static.ts).
 */

const PUBLISHABLE_KEY = /^pk_[0-9a-f]{32}$/;
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;
const BOARD_PATH = /^\/board\/([^/]+)(?:\/(?:new|roadmap|submit|changelog|items\/[0-9a-f-]{36})?)?\/?$/;
const FEED_PATH = /^\/board\/([^/]+)\/changelog\.atom$/;
/** Entries in the feed: the newest, as feed readers keep their own history. */
const FEED_ENTRIES = 50;
/** The loader changes rarely and must reach pages soon after a deployment: five minutes. */
const LOADER_MAX_AGE_MS = 5 * 60 * 1000;

/**
 * The panel's and the board's CSP: the one page policy (page-csp.ts), framed only by the project's
 * allowed origins (any when the list is empty, as for the API key's CORS).
 */
export function embedCsp(allowedOrigins: string[]): string {
  return pageCsp(frameAncestors(allowedOrigins));
}

/**
 * The CSP source list of the allowed origins: any when the list is empty. Only exact origins are
 * stored since issue 33 (cors/allowed-origins.schema.ts); one saved before (`http://*`) is left out
 * here rather than copied into the header as a pattern, and a list with none left allows none.
 */
function frameAncestors(allowedOrigins: string[]): string {
  if (allowedOrigins.length === 0) return '*';
  const exact = allowedOrigins.filter(isExactOrigin);
  return exact.length > 0 ? exact.join(' ') : "'none'";
}

function notFoundPage(ctx: RequestContext, what: string) {
  ctx.status = 404;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.set('Content-Security-Policy', UNFRAMED_PAGE_CSP);
  ctx.body = `${what}\n`;
}

async function sendPage(ctx: RequestContext, distDir: string, file: string, allowedOrigins: string[]) {
  ctx.set({
    'Content-Security-Policy': embedCsp(allowedOrigins),
    'X-Content-Type-Options': 'nosniff',
    // The board's and the panel's URLs name the project; no page of theirs sends them anywhere.
    'Referrer-Policy': 'no-referrer',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
    'Cache-Control': 'no-cache',
  });
  if (!existsSync(path.join(distDir, file))) {
    ctx.status = 503;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'The widget is not built yet: run `npm run build:web` (npm install does it too).\n';
    return;
  }
  await send(ctx, file, { root: distDir, index: false, gzip: true, brotli: true });
}

export function embedPages({
  sql,
  distDir = WEB_DIST_DIR,
  publicUrl,
}: {
  sql: Sql;
  distDir?: string;
  publicUrl?: string | undefined;
}): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/widget.js') {
      ctx.set({
        'X-Content-Type-Options': 'nosniff',
        // Loaded by other sites' pages, including ones that isolate themselves (COEP).
        'Cross-Origin-Resource-Policy': 'cross-origin',
      });
      await send(ctx, 'widget.js', { root: distDir, maxage: LOADER_MAX_AGE_MS, index: false, gzip: true, brotli: true });
      return;
    }
    if (ctx.path === '/widget') {
      const key = typeof ctx.query.key === 'string' ? ctx.query.key : '';
      const origins = PUBLISHABLE_KEY.test(key) ? await framingOriginsByPublishableKey(sql, key) : null;
      if (!origins) return notFoundPage(ctx, 'No project has this publishable key.');
      return sendPage(ctx, distDir, 'widget.html', origins);
    }
    const feed = FEED_PATH.exec(ctx.path);
    if (feed) {
      const slug = feed[1] ?? '';
      const project = SLUG.test(slug) ? await publicBoardProject(sql, slug) : null;
      if (!project) return notFoundPage(ctx, 'This board does not exist or is not public.');
      // The service's public address when configured (links in a feed outlive the request), else the request's.
      const origin = publicUrl ? new URL(publicUrl).origin : ctx.origin;
      const boardUrl = `${origin}/board/${slug}`;
      ctx.set({
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'public, max-age=300',
        'Content-Security-Policy': UNFRAMED_PAGE_CSP,
      });
      ctx.type = 'application/atom+xml; charset=utf-8';
      ctx.body = changelogAtom({
        boardUrl,
        feedUrl: `${boardUrl}/changelog.atom`,
        projectName: project.name,
        entries: await listPublishedEntries(sql, project.id, FEED_ENTRIES),
      });
      return;
    }
    const board = BOARD_PATH.exec(ctx.path);
    if (board) {
      const slug = board[1] ?? '';
      const origins = SLUG.test(slug) ? await framingOriginsByBoardSlug(sql, slug) : null;
      if (!origins) return notFoundPage(ctx, 'This board does not exist or is not public.');
      return sendPage(ctx, distDir, 'board.html', origins);
    }
    return next();
  };
}
