import type { ParameterizedContext } from 'koa';
import type { Account } from '../oltp/accounts.repo.js';
import type { ProjectWithPlan } from '../oltp/projects.repo.js';
import type { SignedIdentity } from './user-token.js';

/** Which budget a route draws from. */
export type Budget = 'ingest' | 'api';

/** Who a request was authenticated as: an id, never the secret. */
export type Caller = { kind: 'project'; id: string } | { kind: 'account'; id: string } | { kind: 'operator' };

/** The rate limiter's charge (middleware/rate-limit.ts): charges the caller's budget, sets the RateLimit-* headers; throws the 429 when it is spent. */
export type ChargeRateLimit = (caller: Caller, budget: Budget) => Promise<void>;

/** What the auth middleware leaves on `ctx.state` for the handlers after it. */
export type AppState = {
  requestId: string;
  /** The project of the X-API-Key, on key-authenticated routes. */
  project?: ProjectWithPlan;
  /** True when that key is the project's publishable key (pk_…), made for web pages. */
  publishableKey?: boolean;
  /** The user a valid X-User-Token names (signed by the host app's server; docs/widget.md). */
  identity?: SignedIdentity;
  /**
   * The service's public origin (PUBLIC_URL), set by the client routes' CORS on requests with an
   * Origin: its own pages call it from there (cors/client-cors.ts).
   */
  serviceOrigin?: string;
  /** The account of the admin bearer token, on admin routes. */
  account?: Account;
  /** The team member whose admin token it is; null for the owner's token. */
  memberId?: string | null;
  /**
   * Set by the rate-limit middleware on limited routes; the auth middlewares charge the caller's
   * budget through it as soon as they know who is calling.
   */
  rateLimit?: ChargeRateLimit;
  /**
   * Set by app.ts: reads and parses the request body into `ctx.request.body`. The auth
   * middlewares call it once the credential is accepted, so a client without one cannot make the
   * service read a body (up to 5 MiB).
   */
  readBody?: () => Promise<void>;
};

export type RequestContext = ParameterizedContext<AppState>;
