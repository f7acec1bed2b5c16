import { TrackerError } from '../../core/trackers.js';
import { findLinkForPush } from '../../oltp/trackers.repo.js';
import { createNewItemIssue, type OutboundDeps, pushStatus, pushVotes } from './outbound.js';

/** At most one votes update per issue in this time (the origin's vote counts moved by the minute). */
export const VOTES_DEBOUNCE_MS = 60_000;

/**
 * What a tracker delivery of the notification outbox asks: an item's linked issue to follow its
 * status, or its votes (the recipient is the link's id); or a new item's issue to be made, in an
 * integration with `auto_create` (the recipient is the item's id).
 */
export type TrackerDeliveryRequest =
  | { type: 'feedback.status_changed' | 'feedback.votes_changed'; linkId: string }
  | { type: 'feedback.created'; feedbackId: string; integrationId: string };

/**
 * How a tracker delivery ended, in the deliveries' terms:
 * - `done`: the issue is in step (changed now, or already);
 * - `later`: try again in `delayMs`: a rate limit's wait (Retry-After, the reset time) or a
 *   tracker that did not answer (`delayMs` null: the usual backoff), which count as failed
 *   attempts; or a votes update within a minute of the last one, which is no attempt (`deferred`);
 * - `never`: nothing can come of retrying: the token was refused (the integration now needs
 *   attention), the issue was unlinked, the tracker refused the request.
 */
export type TrackerDeliveryOutcome =
  | { kind: 'done'; detail: string; calls: number }
  | { kind: 'later'; delayMs: number | null; reason: string; deferred: boolean }
  | { kind: 'never'; reason: string };

/** Runs one tracker delivery (src/workers/notify/sender.ts hands them here). */
export async function runTrackerDelivery(
  deps: OutboundDeps,
  request: TrackerDeliveryRequest,
  now = Date.now(),
): Promise<TrackerDeliveryOutcome> {
  if (request.type === 'feedback.votes_changed') {
    const link = await findLinkForPush(deps.sql, request.linkId);
    const last = link?.votes_line_at?.getTime();
    if (last !== undefined && now - last < VOTES_DEBOUNCE_MS) {
      return {
        kind: 'later',
        delayMs: last + VOTES_DEBOUNCE_MS - now,
        reason: 'at most one votes update a minute per issue',
        deferred: true,
      };
    }
  }
  try {
    if (request.type === 'feedback.created') {
      // Nothing to make (the item went, was merged or linked meanwhile) is not a failure of the delivery.
      const result = await createNewItemIssue(deps, request.integrationId, request.feedbackId);
      return { kind: 'done', detail: result.detail, calls: result.calls };
    }
    const result =
      request.type === 'feedback.status_changed' ? await pushStatus(deps, request.linkId) : await pushVotes(deps, request.linkId);
    if (result.outcome === 'pushed' || result.outcome === 'in_step') return { kind: 'done', detail: result.detail, calls: result.calls };
    if (result.outcome === 'skipped' && /no votes line/.test(result.detail))
      return { kind: 'done', detail: result.detail, calls: result.calls };
    return { kind: 'never', reason: result.detail };
  } catch (error) {
    if (!(error instanceof TrackerError)) throw error;
    if (error.failure === 'rate_limited')
      return { kind: 'later', delayMs: error.retryAfterMs ?? null, reason: error.message, deferred: false };
    if (error.failure === 'unavailable') return { kind: 'later', delayMs: null, reason: error.message, deferred: false };
    return { kind: 'never', reason: error.message };
  }
}
