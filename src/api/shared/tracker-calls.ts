import type { TrackerConnection, TrackerKind } from '../../core/trackers.js';
import { TrackerError } from '../../core/trackers.js';
import type { SqlLike } from '../../oltp/db.js';
import { markNeedsAttention, type TrackerForCall } from '../../oltp/trackers.repo.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest, conflict } from '../errors.js';
import { error } from './building-blocks.js';

/*
 * Tracker calls made inside a request (discovery, creating and linking issues): the connection
 * of a saved integration, and a failed call's answer. The discovery routes (integrations/) and
 * the issue routes (issues/) share them.
 */

export const TRACKER_NAMES: Record<TrackerKind, string> = { github: 'GitHub', linear: 'Linear' };

/** The connection of a saved integration: its api_url, its token unsealed for the call. */
export function connectionOf(deps: Pick<ApiDeps, 'secretBox'>, tracker: TrackerForCall): TrackerConnection {
  return { apiUrl: tracker.url, token: deps.secretBox.open(tracker.token_sealed) };
}

/**
 * A saved integration may be called: enabled, and its token not refused before (a refused token
 * is not tried again until the owner gives another: 409).
 */
export function assertCallable(tracker: TrackerForCall): void {
  if (!tracker.enabled) throw conflict(`the ${tracker.kind} integration is disabled: enable it first`);
  if (tracker.settings.needs_attention) {
    throw conflict(
      `the ${tracker.kind} integration needs attention: ${tracker.settings.needs_attention}; give it a new token (PATCH its token)`,
    );
  }
}

/**
 * Runs a tracker call of a request and answers its failure: a token refused (401) or short of a
 * permission (403) is the owner's to fix: a 400 naming `token` for a token being tried, a 409 for a
 * saved integration's, which is then marked as needing attention; a rate limit is a 429 with
 * `Retry-After`; a missing repository, team or issue, or a request the tracker refused, a 400; an
 * address the SSRF guard refuses, a 400 naming `apiUrl`; a tracker that does not answer, a 502.
 */
export async function trackerCall<T>(
  context: { kind: TrackerKind; sql: SqlLike; saved: TrackerForCall | null; notFound?: string },
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (failure) {
    if (!(failure instanceof TrackerError)) throw failure;
    const name = TRACKER_NAMES[context.kind];
    switch (failure.failure) {
      case 'unauthorized':
      case 'forbidden':
        if (context.saved) {
          await markNeedsAttention(context.sql, context.saved.id, failure.message);
          throw conflict(`the ${context.kind} integration needs attention: ${failure.message}; give it a new token (PATCH its token)`);
        }
        throw badRequest(`token: ${failure.message}`);
      case 'rate_limited': {
        const seconds = Math.max(1, Math.ceil((failure.retryAfterMs ?? 60_000) / 1000));
        throw new AppError(429, `${name} is rate limiting this token: try again in ${seconds} s (${failure.message})`, {
          'Retry-After': String(seconds),
        });
      }
      case 'not_found':
        throw badRequest(context.notFound ? `${context.notFound} (${failure.message})` : failure.message);
      case 'invalid':
        throw badRequest(`${name} refused the request: ${failure.message}`);
      case 'blocked':
        throw badRequest(`apiUrl: ${failure.message}`);
      case 'unavailable':
        throw new AppError(502, `${name} did not answer: ${failure.message}`);
    }
  }
}

/**
 * The status a route that calls a tracker documents beside its own. (Its 429, with `Retry-After`,
 * is the rate limiter's, which every route documents: a tracker's rate limit answers the same way.)
 */
export const trackerCallResponses = {
  502: error('The tracker did not answer (a 5xx, a time-out, a refused connection).'),
};
