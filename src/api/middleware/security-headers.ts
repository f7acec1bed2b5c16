import type { Middleware } from 'koa';
import type { AppState } from '../state.js';

/**
 * Headers every answer carries, whatever route or error produced it. `nosniff` stops a browser
 * from guessing a type other than the declared one: a JSON answer that echoes a caller's string
 * (an error reason, a feedback title) is never run as HTML or script, and the docs page's assets
 * load only under their declared types. Set before the rest of the chain, so error answers carry
 * it too.
 */
export function securityHeaders(): Middleware<AppState> {
  return (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    return next();
  };
}
