import type { Middleware } from 'koa';
import type { AppState } from '../state.js';

/**
 * Answers `GET /feedbacks%3Fstatus=in_progress` as `GET /feedbacks?status=in_progress`
 * (docs/clients.md). The origin project's Swift SDK builds its filtered list URL with
 * `appendingPathComponent`, which percent-encodes the `?`: without this, the shipped SDK's status
 * filter asks for a path that names no route. Only a `%3F` right after the path of a route without
 * path parameters is read so, so an id that contains an encoded `?` (`/users/a%3Fb`) keeps its
 * meaning. The rest of the path becomes the query, before any real query the URL also had.
 */
export function encodedQuery(literalPaths: readonly string[]): Middleware<AppState> {
  const known = new Set(literalPaths);
  return (ctx, next) => {
    const url = ctx.url;
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    // Most requests have no `%3` at all: one scan of the path, nothing else.
    if (!path.includes('%3')) return next();
    const at = path.search(/%3f/i);
    if (at < 0 || !known.has(path.slice(0, at))) return next();
    const meant = path.slice(at + 3);
    const given = queryAt < 0 ? '' : url.slice(queryAt + 1);
    ctx.url = `${path.slice(0, at)}?${[meant, given].filter((part) => part !== '').join('&')}`;
    return next();
  };
}
