import type { Sql } from '../../oltp/db.js';
import { registerSdkUser } from '../../oltp/sdk-users.repo.js';
import { keyProject } from '../auth.js';
import { badRequest, forbidden, unauthorized } from '../errors.js';
import type { RateLimits } from '../middleware/rate-limit.js';
import type { RequestContext } from '../state.js';
import { ANONYMOUS_USER_ID } from './anonymous-alias.js';

/** Who acts in a write request, and how we know (docs/widget.md, "Who can act"). */
export type ActingUser = {
  userId: string;
  /** An anonymous visitor of a public board: their submissions wait for the owner's approval. */
  anonymous: boolean;
  /** The signed token's email, for notifications when the body gives none. */
  email?: string | undefined;
};

/**
 * The user a write (create, vote, unvote, comment) acts as:
 * - with a valid X-User-Token, the token's `sub`; a body userId that differs is a 403;
 * - without one, when the project requires signed identity, a 401;
 * - with the publishable key and no token, an anonymous visitor: only where the owner turned
 *   anonymous feedback on, with an `anon-…` id, charged to the per-IP anonymous budget (429);
 * - with the secret key and no token, the body's userId, exactly as SPEC part 5 says.
 */
export async function actingUser(ctx: RequestContext, deps: { sql: Sql; rateLimits: RateLimits }, bodyUserId: string): Promise<ActingUser> {
  const project = keyProject(ctx);
  const identity = ctx.state.identity;
  if (identity) {
    if (bodyUserId !== identity.userId) throw forbidden('userId: differs from the user of X-User-Token');
    await applySignedProfile(ctx, deps.sql);
    return { userId: identity.userId, anonymous: false, email: identity.email };
  }
  if (project.require_signed_identity) {
    throw unauthorized('X-User-Token: this project requires a user token signed by the app’s server');
  }
  if (!ctx.state.publishableKey) return { userId: bodyUserId, anonymous: false };
  if (!project.anonymous_feedback) {
    throw unauthorized('X-User-Token: a publishable key acts for a user only with a signed token');
  }
  if (!ANONYMOUS_USER_ID.test(bodyUserId)) throw badRequest('userId: an anonymous visitor’s id must look like anon-<random>');
  await deps.rateLimits.chargeAnonymous(ctx);
  return { userId: bodyUserId, anonymous: true };
}

/**
 * The token's `mrr` updates the SDK user as POST /users/register would, once per change: a
 * token is sent with every request, and an unchanged figure is no new fact.
 */
export async function applySignedProfile(ctx: RequestContext, sql: Sql): Promise<void> {
  const identity = ctx.state.identity;
  if (!identity || identity.mrr === undefined) return;
  const projectId = keyProject(ctx).id;
  const [stored] = await sql<{ mrr: number | null }[]>`
    select mrr from sdk_users where project_id = ${projectId} and user_id = ${identity.userId}`;
  if (stored && stored.mrr === identity.mrr) return;
  await registerSdkUser(sql, projectId, { userId: identity.userId, mrr: identity.mrr });
}

/**
 * Whose votes `has_voted` reflects (SPEC 2.1): the signed user when a token came, else the
 * X-User-Id header; an empty or missing header is no user. Node joins a repeated header into one
 * string ("u, u"), which would name nobody, and the Kotlin SDK configured as its README shows
 * sends the header twice with the same value: each value is read apart, equal ones count as one,
 * and differing ones are a 400 (the request names two users), with or without a token.
 */
export function viewerOf(ctx: RequestContext): string | undefined {
  const headerUser = headerViewer(ctx);
  return ctx.state.identity?.userId ?? headerUser;
}

function headerViewer(ctx: RequestContext): string | undefined {
  const values = ctx.req.headersDistinct['x-user-id'];
  if (values === undefined) return undefined;
  const [first, ...rest] = values;
  if (rest.some((value) => value !== first)) throw badRequest('X-User-Id: sent more than once with different values');
  return first || undefined;
}
