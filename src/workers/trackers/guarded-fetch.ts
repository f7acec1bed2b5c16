import { Agent, fetch as undiciFetch } from 'undici';
import { assertPublicHost, guardedLookup } from '../notify/ssrf.js';

export type GuardedHttp = {
  /** A fetch for clients that take one (Octokit's `request.fetch`): the guard, and the time limit. */
  fetch: typeof globalThis.fetch;
  /**
   * The guarded dispatcher, for clients that call the global fetch and pass their options through
   * to it (the Linear SDK's `LinearClient` options).
   */
  dispatcher: Agent;
  /** A fresh time limit for one call. */
  signal(): AbortSignal;
  /** Throws a BlockedAddressError for an api_url whose host is a refused IP literal. */
  checkUrl(url: string): void;
};

/**
 * The HTTP of the tracker clients, behind the SSRF guard of webhooks (src/workers/notify/ssrf.ts):
 * every connection resolves its host through `guardedLookup`, which refuses loopback, private,
 * link-local and reserved addresses (and this host's own), and IP literals, which Node connects
 * to without a lookup, are checked by `assertPublicHost` before the call. An api_url is chosen by
 * the owner, so without the guard it could make the service call its own network. With
 * ALLOW_PRIVATE_WEBHOOKS neither check runs (tests, GitHub Enterprise Server on a private network).
 *
 * undici's Agent is where a fetch takes a `lookup`; Node's own fetch accepts it as `dispatcher`.
 */
export function guardedHttp(options: { allowPrivate: boolean; timeoutMs: number }): GuardedHttp {
  const dispatcher = new Agent({
    connect: options.allowPrivate ? { timeout: options.timeoutMs } : { timeout: options.timeoutMs, lookup: guardedLookup },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const checkUrl = (url: string) => {
    if (!options.allowPrivate) assertPublicHost(new URL(url).hostname);
  };
  const signal = () => AbortSignal.timeout(options.timeoutMs);
  const fetch = ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    checkUrl(url);
    return undiciFetch(url, { ...(init as object), dispatcher, signal: init?.signal ?? signal() } as Parameters<typeof undiciFetch>[1]);
  }) as unknown as typeof globalThis.fetch;
  return { fetch, dispatcher, signal, checkUrl };
}
