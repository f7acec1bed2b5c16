import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { PLAN_LIMITS } from '../core/plans.js';
import { hashSecret, PUBLISHABLE_KEY_PREFIX } from '../core/secrets.js';
import { findAccountByAdminTokenHash } from '../oltp/accounts.repo.js';
import type { Sql } from '../oltp/db.js';
import type { ProjectKeyCache } from '../oltp/projects.cache.js';
import { findProject, type ProjectWithPlan } from '../oltp/projects.repo.js';
import { refuseUnlistedOrigin } from './cors/client-cors.js';
import { forbidden, notFound, unauthorized } from './errors.js';
import type { AppState, Budget, RequestContext } from './state.js';
import { verifyUserToken } from './user-token.js';
import { isUuid } from './validation.js';

/**
 * Reads the request body (app.ts defers it to here): only once the caller is authenticated, its
 * budget charged and its project or account allowed, so no refused request has its body read.
 */
async function readBody(ctx: RequestContext): Promise<void> {
  const read = ctx.state.readBody;
  ctx.state.readBody = undefined;
  await read?.();
}

/**
 * X-API-Key authentication (SPEC 5): 401 without a valid key, 403 for a suspended project.
 * Keys are compared by their sha256, so the lookup is one unique-index probe, remembered in
 * process (projects.cache.ts). The request is charged to the project's `budget` (ingestion
 * routes have their own; see rate-limit.ts).
 */
export function apiKeyAuth(
  projectKeys: ProjectKeyCache,
  options: { budget?: Budget; acceptsPublishableKey?: boolean } = {},
): Middleware<AppState> {
  const budget = options.budget ?? 'api';
  const hashes = new KeyHashes();
  const publishableAuth = publishableKeyAuth(projectKeys, budget, options.acceptsPublishableKey === true);
  return async (ctx, next) => {
    const key = ctx.get('x-api-key');
    if (!key) throw unauthorized('missing X-API-Key header');
    if (key.startsWith(PUBLISHABLE_KEY_PREFIX)) return publishableAuth(ctx, key, next);
    const hash = hashes.of(key);
    const project = projectKeys.cached(hash.hex) ?? (await projectKeys.lookup(hash.buffer, hash.hex));
    if (!project) throw unauthorized('invalid API key');
    hashes.remember(key, hash);
    await ctx.state.rateLimit?.({ kind: 'project', id: project.id }, budget);
    if (project.suspended) throw forbidden('project is suspended');
    refuseUnlistedOrigin(ctx, project);
    ctx.state.project = project;
    // Only a request that sends a token pays for its verification: the ingestion path stays as it was.
    if (ctx.get('x-user-token')) ctx.state.identity = await verifyUserToken(ctx.get('x-user-token'), project.identity_secret);
    await readBody(ctx);
    await next();
  };
}

/**
 * The publishable key (pk_…) of a web page (docs/widget.md): accepted only where
 * `acceptsPublishableKey` says so; elsewhere (metrics, POST /users/register) a valid one gets 403,
 * since those read revenue or set it.
 */
function publishableKeyAuth(projectKeys: ProjectKeyCache, budget: Budget, accepted: boolean) {
  return async (ctx: RequestContext, key: string, next: () => Promise<unknown>) => {
    const project = projectKeys.cachedPublishable(key) ?? (await projectKeys.lookupPublishable(key));
    if (!project) throw unauthorized('invalid API key');
    await ctx.state.rateLimit?.({ kind: 'project', id: project.id }, budget);
    if (!accepted) throw forbidden('a publishable key cannot be used here: use the secret API key from your server');
    if (project.suspended) throw forbidden('project is suspended');
    refuseUnlistedOrigin(ctx, project);
    ctx.state.project = project;
    ctx.state.publishableKey = true;
    if (ctx.get('x-user-token')) ctx.state.identity = await verifyUserToken(ctx.get('x-user-token'), project.identity_secret);
    await readBody(ctx);
    await next();
  };
}

type KeyHash = { buffer: Buffer; hex: string };

/**
 * The sha256 of API keys that authenticated recently. A key is hashed on every request, and the
 * hash (and its hex form, the cache's key) was a visible share of the ingestion path's CPU
 * (BENCHMARKS.md, "BullMQ request path"). A hash is a pure function of the key, so a remembered one
 * is never stale: whether the key is still valid is asked of the project cache every time. Only
 * keys that matched a project are kept, so random keys cannot fill it; it is bounded all the same.
 */
class KeyHashes {
  static readonly MAX = 10_000;
  readonly #known = new Map<string, KeyHash>();

  of(key: string): KeyHash {
    const known = this.#known.get(key);
    if (known) return known;
    const buffer = hashSecret(key);
    return { buffer, hex: buffer.toString('hex') };
  }

  remember(key: string, hash: KeyHash): void {
    if (this.#known.has(key)) return;
    if (this.#known.size >= KeyHashes.MAX) this.#known.clear();
    this.#known.set(key, hash);
  }
}

function bearerToken(ctx: RequestContext): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  return match?.[1] ?? null;
}

/**
 * Admin bearer token of an account (DESIGN 3): the owner's or a team member's, both acting as the
 * account. 401 when missing or unknown, and for a member's token while the account's plan has no
 * team members (after a downgrade: the member and its token are kept, and work again on Team).
 */
export function adminAuth(sql: Sql): Middleware<AppState> {
  return async (ctx, next) => {
    const token = bearerToken(ctx);
    if (!token) throw unauthorized('missing admin bearer token (Authorization: Bearer <token>)');
    const owner = await findAccountByAdminTokenHash(sql, hashSecret(token));
    if (!owner) throw unauthorized('invalid admin token');
    const { account, memberId } = owner;
    if (memberId !== null && !PLAN_LIMITS[account.plan].teamMembers) {
      throw unauthorized('member tokens require the Team plan');
    }
    await ctx.state.rateLimit?.({ kind: 'account', id: account.id }, 'api');
    ctx.state.account = account;
    ctx.state.memberId = memberId;
    await readBody(ctx);
    await next();
  };
}

/** The operator token (env OPERATOR_TOKEN): compared in constant time. */
export function operatorAuth(operatorToken: string): Middleware<AppState> {
  const expected = hashSecret(operatorToken);
  return async (ctx, next) => {
    const token = bearerToken(ctx);
    if (!token) throw unauthorized('missing operator bearer token (Authorization: Bearer <token>)');
    if (!timingSafeEqual(hashSecret(token), expected)) throw unauthorized('invalid operator token');
    await ctx.state.rateLimit?.({ kind: 'operator' }, 'api');
    await readBody(ctx);
    await next();
  };
}

/**
 * Loads the `:id` project for an admin route: 404 when it does not exist, 403 when it belongs
 * to another account, and 403 when suspended unless `allowSuspended` (the owner may still see
 * and rename it).
 */
export async function ownedProject(
  sql: Sql,
  ctx: RequestContext,
  id: string,
  options: { allowSuspended?: boolean } = {},
): Promise<ProjectWithPlan> {
  const account = ctx.state.account;
  if (!account) throw unauthorized('missing admin bearer token');
  const project = isUuid(id) ? await findProject(sql, id) : null;
  if (!project) throw notFound('project not found');
  if (project.account_id !== account.id) throw forbidden('no access to this project');
  if (project.suspended && !options.allowSuspended) throw forbidden('project is suspended');
  return project;
}

/** The project authenticated by X-API-Key; only valid behind apiKeyAuth. */
export function keyProject(ctx: RequestContext): ProjectWithPlan {
  const project = ctx.state.project;
  if (!project) throw unauthorized('missing X-API-Key header');
  return project;
}
