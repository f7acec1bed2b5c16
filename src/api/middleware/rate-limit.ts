import type { Redis } from 'ioredis';
import type { Middleware } from 'koa';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible';
import type { Config, RateLimit } from '../../core/config.js';
import { AppError } from '../errors.js';
import type { AppState, Budget, Caller, RequestContext } from '../state.js';

/**
 * Rate limiting (SPEC 8.4, README "Rate limiting"), with rate-limiter-flexible: fixed windows,
 * counted in Redis when REDIS_URL is set (so every API process shares one budget), in process
 * memory otherwise.
 *
 * - Once authentication knows the caller, it charges the caller's budget (`ctx.state.rateLimit`,
 *   called by the auth middlewares): `ingest` for POST /events/track and /events/batch, `api` for
 *   every other route; one per API key (project), admin token (account) or operator token. The
 *   counters are keyed by project or account id, never by the secret.
 * - Every 401 is charged to the client IP's `authFailures` budget; once it is spent, requests
 *   from that IP are refused with 429 before their credentials are even looked up.
 *
 * Every response of a limited route that got as far as a budget carries RateLimit-Limit,
 * RateLimit-Remaining and RateLimit-Reset (seconds); a 429 adds Retry-After.
 */

type Verdict = { allowed: boolean; limit: number; remaining: number; msBeforeReset: number };

/** A Redis that does not answer within this time is treated as down (see the insurance limiter). */
const REDIS_TIMEOUT_MS = 500;

type PendingCharge = { resolve: (verdict: Verdict) => void; reject: (error: unknown) => void };

/**
 * One budget: `points` per fixed window, counted per subject (a project, an account, an IP).
 * A charge answers at once (a verdict) when the counts live in this process, or later (a promise)
 * when they live in Redis.
 */
export interface Counter {
  readonly limit: NonNullable<RateLimit>;
  /** Counts one request. */
  consume(subject: string): Verdict | Promise<Verdict>;
  /** The subject's state when its budget is spent for this window; null while some is left. */
  spent(subject: string): Verdict | null | Promise<Verdict | null>;
  /** `100 per second`, for the 429's reason. */
  describe(): string;
}

function describeLimit({ points, windowSeconds }: NonNullable<RateLimit>): string {
  const window = windowSeconds === 1 ? 'second' : windowSeconds === 60 ? 'minute' : `${windowSeconds} s`;
  return `${points} per ${window}`;
}

/**
 * The counts of one budget in this process's memory (no REDIS_URL: one process serves the API).
 * Fixed windows as rate-limiter-flexible's RateLimiterMemory counts them (a subject's window
 * starts with its first request and lasts `windowSeconds`), with the same verdicts, but charged
 * synchronously: no promise, timer or result object per request. The limiter's promise chain
 * and its per-subject coalescing were the largest middleware cost of an ingestion request
 * (BENCHMARKS.md, "Issue 31: request cost"). Ended windows are swept once per window.
 */
export class InProcessCounter implements Counter {
  readonly #windows = new Map<string, { consumed: number; resetAt: number }>();
  readonly #windowMs: number;
  #nextSweep: number;

  constructor(readonly limit: NonNullable<RateLimit>) {
    this.#windowMs = limit.windowSeconds * 1000;
    this.#nextSweep = Date.now() + this.#windowMs;
  }

  consume(subject: string): Verdict {
    const now = Date.now();
    if (now >= this.#nextSweep) this.#sweep(now);
    let window = this.#windows.get(subject);
    if (window === undefined || window.resetAt <= now) {
      window = { consumed: 0, resetAt: now + this.#windowMs };
      this.#windows.set(subject, window);
    }
    const number = ++window.consumed;
    const allowed = number <= this.limit.points;
    return {
      allowed,
      limit: this.limit.points,
      remaining: allowed ? this.limit.points - number : 0,
      msBeforeReset: window.resetAt - now,
    };
  }

  spent(subject: string): Verdict | null {
    const now = Date.now();
    const window = this.#windows.get(subject);
    if (window === undefined || window.resetAt <= now || window.consumed < this.limit.points) return null;
    return { allowed: false, limit: this.limit.points, remaining: 0, msBeforeReset: window.resetAt - now };
  }

  describe(): string {
    return describeLimit(this.limit);
  }

  #sweep(now: number): void {
    for (const [subject, window] of this.#windows) if (window.resetAt <= now) this.#windows.delete(subject);
    this.#nextSweep = now + this.#windowMs;
  }
}

/**
 * One budget counted in Redis, shared by every API process (rate-limiter-flexible).
 *
 * Charges are coalesced per subject: while one charge of a subject is on its way to the store,
 * the next requests of that subject wait and then go together as one charge of n points. A busy
 * API key thus costs one Redis round trip per round trip, not one per request (measured as a
 * large share of the ingestion path's cost, BENCHMARKS.md), and the count stays exact.
 */
class SharedCounter implements Counter {
  readonly #waiting = new Map<string, PendingCharge[]>();
  readonly #charging = new Set<string>();

  constructor(
    readonly limit: NonNullable<RateLimit>,
    private readonly limiter: RateLimiterAbstract,
  ) {}

  /** Counts one request. */
  consume(subject: string): Promise<Verdict> {
    return new Promise<Verdict>((resolve, reject) => {
      const waiting = this.#waiting.get(subject);
      if (waiting) waiting.push({ resolve, reject });
      else this.#waiting.set(subject, [{ resolve, reject }]);
      if (!this.#charging.has(subject)) this.#chargeWaiting(subject);
    });
  }

  #chargeWaiting(subject: string): void {
    const charges = this.#waiting.get(subject);
    if (!charges) return;
    this.#waiting.delete(subject);
    this.#charging.add(subject);
    this.#consumeMany(subject, charges.length)
      .then(
        (verdicts) => {
          for (const [i, charge] of charges.entries()) charge.resolve(verdicts[i] as Verdict);
        },
        (error: unknown) => {
          for (const charge of charges) charge.reject(error);
        },
      )
      .finally(() => {
        this.#charging.delete(subject);
        this.#chargeWaiting(subject);
      });
  }

  /**
   * Charges n requests at once. The store answers the count after the charge; the requests are
   * numbered in arrival order, and those whose number is within the budget are allowed.
   */
  async #consumeMany(subject: string, n: number): Promise<Verdict[]> {
    let res: RateLimiterRes;
    try {
      res = await this.limiter.consume(subject, n);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      res = error;
    }
    // A subject blocked in process memory (inMemoryBlockOnConsumed) is refused without counting:
    // its answer does not include this charge, and every request of it is over the budget.
    const counted = res.consumedPoints >= n;
    return Array.from({ length: n }, (_, i) => {
      const number = counted ? res.consumedPoints - n + i + 1 : Number.POSITIVE_INFINITY;
      const allowed = number <= this.limit.points;
      return {
        allowed,
        limit: this.limit.points,
        remaining: allowed ? Math.max(0, this.limit.points - number) : 0,
        msBeforeReset: Math.max(0, res.msBeforeNext),
      };
    });
  }

  async spent(subject: string): Promise<Verdict | null> {
    const res = await this.limiter.get(subject);
    if (!res || res.consumedPoints < this.limit.points) return null;
    return {
      allowed: false,
      limit: this.limit.points,
      remaining: Math.max(0, Math.min(this.limit.points, res.remainingPoints)),
      msBeforeReset: Math.max(0, res.msBeforeNext),
    };
  }

  describe(): string {
    return describeLimit(this.limit);
  }
}

/** The service's budgets, built once per process (src/runtime/services.ts) from the config. */
export class RateLimits {
  readonly store: 'redis' | 'memory';
  readonly trustedProxyHops: number;
  readonly ingest: Counter | undefined;
  readonly api: Counter | undefined;
  readonly authFailures: Counter | undefined;
  /** Per client IP: votes, comments and submissions made anonymously on a public board (docs/widget.md). */
  readonly anonymous: Counter | undefined;

  /**
   * With `redis`, counters live under `<prefix>:ratelimit:<budget>:` and are shared by every
   * process on that Redis. While Redis is unreachable, or slower than 500 ms, each process falls
   * back to an in-memory counter of the same budget (rate-limiter-flexible's insurance limiter):
   * requests are still limited, per process, and never fail because of the limiter.
   */
  constructor(settings: Config['rateLimits'], redis?: { client: Redis; prefix: string }) {
    this.store = redis ? 'redis' : 'memory';
    this.trustedProxyHops = settings.trustedProxyHops;
    const counter = (name: string, limit: RateLimit): Counter | undefined => {
      if (!limit) return undefined;
      if (!redis) return new InProcessCounter(limit);
      const options = { points: limit.points, duration: limit.windowSeconds };
      const memory = new RateLimiterMemory({ ...options, keyPrefix: `ratelimit:${name}` });
      const store = new RateLimiterRedis({
        ...options,
        storeClient: redis.client,
        keyPrefix: `${redis.prefix}:ratelimit:${name}`,
        // Fail over to the insurance limiter at once while disconnected instead of queueing.
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
        // A subject over its budget is refused from process memory until its window ends,
        // without a Redis round trip per excess request.
        inMemoryBlockOnConsumed: limit.points + 1,
      });
      return new SharedCounter(limit, new RLWrapperTimeouts({ limiter: store, timeoutMs: REDIS_TIMEOUT_MS }));
    };
    this.ingest = counter('ingest', settings.ingest);
    this.api = counter('api', settings.api);
    this.authFailures = counter('auth-failures', settings.authFailures);
    this.anonymous = counter('anonymous', settings.anonymous);
  }

  /** Charges one anonymous action to the client's address: 429 (with Retry-After) once its budget is spent. */
  async chargeAnonymous(ctx: RequestContext): Promise<void> {
    if (!this.anonymous) return;
    const verdict = await this.anonymous.consume(`ip:${clientIp(ctx, this.trustedProxyHops)}`);
    if (!verdict.allowed) throw tooManyRequests(verdict, `anonymous actions from this address (at most ${this.anonymous.describe()})`);
  }
}

const CALLER_NOUN: Record<Caller['kind'], string> = {
  project: 'API key',
  account: 'admin token',
  operator: 'operator token',
};

const subjectOf = (caller: Caller) => (caller.kind === 'operator' ? 'operator' : `${caller.kind}:${caller.id}`);

const seconds = (ms: number) => Math.ceil(ms / 1000);

/** Sets the RateLimit-* headers one by one: no object per request on the hot path. */
function setRateLimitHeaders(ctx: RequestContext, verdict: Verdict): void {
  ctx.set('RateLimit-Limit', String(verdict.limit));
  ctx.set('RateLimit-Remaining', String(verdict.remaining));
  ctx.set('RateLimit-Reset', String(seconds(verdict.msBeforeReset)));
}

function rateLimitHeaders(verdict: Verdict): Record<string, string> {
  return {
    'RateLimit-Limit': String(verdict.limit),
    'RateLimit-Remaining': String(verdict.remaining),
    'RateLimit-Reset': String(seconds(verdict.msBeforeReset)),
  };
}

function tooManyRequests(verdict: Verdict, what: string): AppError {
  const retryAfter = Math.max(1, seconds(verdict.msBeforeReset));
  return new AppError(429, `too many requests: ${what}; retry in ${retryAfter} s`, {
    ...rateLimitHeaders(verdict),
    'Retry-After': String(retryAfter),
  });
}

/**
 * The client's address: the TCP peer, or behind `hops` trusted reverse proxies the X-Forwarded-For
 * entry the outermost of them appended (entries further left are the client's own claims).
 */
export function clientIp(ctx: RequestContext, hops: number): string {
  let ip = ctx.req.socket.remoteAddress ?? 'unknown';
  if (hops > 0) {
    const forwarded = ctx
      .get('x-forwarded-for')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);
    if (forwarded.length > 0) ip = forwarded[Math.max(0, forwarded.length - hops)] ?? ip;
  }
  return ip.startsWith('::ffff:') ? ip.slice('::ffff:'.length) : ip;
}

/**
 * The limiter for the routes `isLimited` selects (the authenticated API, not health checks or
 * documentation). Runs before the body parsers: an IP whose failed-authentication budget is spent
 * is refused before its body is read or its credentials are looked up.
 */
export function rateLimiting(limits: RateLimits, isLimited: (path: string) => boolean): Middleware<AppState> {
  const suspects = new RecentFailures(limits.authFailures ? limits.authFailures.limit.windowSeconds * 1000 : 0);
  const failures = limits.authFailures;
  const charge = chargeOf(limits);
  return async (ctx, next) => {
    if (!isLimited(ctx.path)) return next();
    // Only addresses that failed here within the window are looked up: a Redis round trip on
    // every request was measured as a large share of the ingestion path's cost (BENCHMARKS.md).
    // An address that failed only on other processes gets at most one more try here, whose 401
    // puts it on this list. While the list is empty (the common case) the address is not even read.
    if (failures && suspects.size > 0) {
      const ip = clientIp(ctx, limits.trustedProxyHops);
      if (suspects.has(ip)) {
        const spent = await failures.spent(ip);
        if (spent) throw tooManyRequests(spent, `failed authentication from this address (at most ${failures.describe()})`);
      }
    }

    ctx.state.rateLimit = (caller, budget) => charge(ctx, caller, budget);

    try {
      await next();
    } catch (error) {
      if (failures && error instanceof AppError && error.status === 401) {
        const ip = clientIp(ctx, limits.trustedProxyHops);
        suspects.add(ip);
        const verdict = await failures.consume(ip);
        throw new AppError(401, error.reason, { ...error.headers, ...rateLimitHeaders(verdict) });
      }
      throw error;
    }
  };
}

const CHARGED: Promise<void> = Promise.resolve();

/**
 * Charges the caller's budget: sets the RateLimit-* headers, or refuses with 429. With the counts
 * in this process the verdict is known at once and an allowed request gets an already settled
 * promise (no promise chain per request); with Redis it waits for the store.
 */
function chargeOf(limits: RateLimits) {
  const apply = (ctx: RequestContext, caller: Caller, budget: Budget, counter: Counter, verdict: Verdict): void => {
    if (!verdict.allowed) {
      const what = budget === 'ingest' ? 'event ingestion' : 'requests';
      throw tooManyRequests(verdict, `${what} over the limit of this ${CALLER_NOUN[caller.kind]} (${counter.describe()})`);
    }
    setRateLimitHeaders(ctx, verdict);
  };
  return (ctx: RequestContext, caller: Caller, budget: Budget): Promise<void> => {
    const counter = limits[budget];
    if (!counter) return CHARGED;
    const verdict = counter.consume(subjectOf(caller));
    if (verdict instanceof Promise) return verdict.then((settled) => apply(ctx, caller, budget, counter, settled));
    try {
      apply(ctx, caller, budget, counter, verdict);
    } catch (error) {
      return Promise.reject(error);
    }
    return CHARGED;
  };
}

/** Addresses with a failed authentication on this process within the window (bounded). */
class RecentFailures {
  static readonly MAX = 100_000;
  readonly #until = new Map<string, number>();
  constructor(private readonly windowMs: number) {}

  get size(): number {
    return this.#until.size;
  }

  add(ip: string): void {
    this.#until.delete(ip);
    this.#until.set(ip, Date.now() + this.windowMs);
    // Oldest first (insertion order): drop the oldest when full.
    if (this.#until.size > RecentFailures.MAX) this.#until.delete(this.#until.keys().next().value as string);
  }

  has(ip: string): boolean {
    const until = this.#until.get(ip);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.#until.delete(ip);
    return false;
  }
}
