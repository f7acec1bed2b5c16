import { badRequest } from './errors.js';
import type { RequestContext } from './state.js';

/**
 * The X-User-Id of a request: the user whose vote `has_voted` reports (SPEC 2.1); an empty or
 * missing header is no user. Node joins a repeated header into one string ("u, u"), which would
 * name nobody, and the Kotlin SDK configured as its README shows sends the header twice with the
 * same value: each value is read apart, equal ones count as one, and differing ones are a 400,
 * since the request names two users.
 */
export function viewerOf(ctx: RequestContext): string | undefined {
  const values = ctx.req.headersDistinct['x-user-id'];
  if (values === undefined) return undefined;
  const [first, ...rest] = values;
  if (rest.some((value) => value !== first)) throw badRequest('X-User-Id: sent more than once with different values');
  return first || undefined;
}
