import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TrackerKind } from '../../core/trackers.js';
import type { InboundEvent } from '../../oltp/trackers.repo.js';

/*
 * What the trackers' webhooks say, as their documentation describes them: the signature, the
 * delivery's id and age, and the one change the sync reads (an issue's state).
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, `X-GitHub-Delivery` (a
 *   GUID, the same on a redelivery), `X-GitHub-Event: issues` with `action` `closed` or `reopened`.
 *   GitHub sends no timestamp: a delivery's age is that of the change, the issue's `updated_at`.
 * - Linear: `Linear-Signature: <hex HMAC-SHA256 of the body>`, the body's `webhookTimestamp`
 *   (epoch ms) and `webhookId`; `type: "Issue"`, `action: "update"` with `updatedFrom.stateId` is a
 *   state change.
 */

/** Deliveries older than this are refused as replays. */
export const REPLAY_WINDOW_MS = 5 * 60_000;

export const SIGNATURE_HEADERS: Record<TrackerKind, string> = { github: 'x-hub-signature-256', linear: 'linear-signature' };

/** Whether `header` is the HMAC-SHA256 of the raw body under `secret`, compared in constant time. */
export function validSignature(kind: TrackerKind, secret: string, raw: Buffer, header: string): boolean {
  const given = kind === 'github' ? /^sha256=([0-9a-f]{64})$/i.exec(header.trim())?.[1] : /^([0-9a-f]{64})$/i.exec(header.trim())?.[1];
  if (!given) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

export type ReadDelivery =
  | { kind: 'delivery'; deliveryId: string; event: InboundEvent | null }
  | { kind: 'refused'; reason: string }
  | { kind: 'stale'; reason: string };

type Json = Record<string, unknown>;
const objectAt = (value: unknown, key: string): Json | undefined => {
  const found = value !== null && typeof value === 'object' ? (value as Json)[key] : undefined;
  return found !== null && typeof found === 'object' && !Array.isArray(found) ? (found as Json) : undefined;
};
const stringAt = (value: unknown, key: string): string | undefined => {
  const found = value !== null && typeof value === 'object' ? (value as Json)[key] : undefined;
  return typeof found === 'string' ? found : undefined;
};

/** A GitHub delivery of a signed body: its id, and the issue state change if it is one. */
export function readGithubDelivery(
  headers: { delivery: string | undefined; event: string | undefined },
  body: unknown,
  repository: string,
  now = Date.now(),
): ReadDelivery {
  const deliveryId = headers.delivery?.trim();
  if (!deliveryId || deliveryId.length > 200) return { kind: 'refused', reason: 'X-GitHub-Delivery: is required' };
  const action = stringAt(body, 'action');
  const issue = objectAt(body, 'issue');
  if (headers.event !== 'issues' || !issue || (action !== 'closed' && action !== 'reopened')) {
    return { kind: 'delivery', deliveryId, event: null }; // a ping, another event or action: recorded, ignored
  }
  const updated = Date.parse(stringAt(issue, 'updated_at') ?? '');
  if (Number.isFinite(updated) && now - updated > REPLAY_WINDOW_MS) {
    return {
      kind: 'stale',
      reason: `the change is older than ${REPLAY_WINDOW_MS / 60_000} minutes (issue.updated_at): refused as a replay`,
    };
  }
  const fullName = stringAt(objectAt(body, 'repository'), 'full_name');
  const number = issue.number;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) return { kind: 'refused', reason: 'issue.number: is required' };
  if (fullName && fullName.toLowerCase() !== repository.toLowerCase()) {
    return { kind: 'delivery', deliveryId, event: null }; // another repository's issue: not one of ours
  }
  const state =
    stringAt(issue, 'state') === 'closed' ? (stringAt(issue, 'state_reason') === 'not_planned' ? 'not_planned' : 'closed') : 'open';
  return {
    kind: 'delivery',
    deliveryId,
    event: { tracker: 'github', action, number, state, title: (stringAt(issue, 'title') ?? '').slice(0, 1000) },
  };
}

/** A Linear delivery of a signed body: its id (the webhook's id with the timestamp), and the state change if it is one. */
export function readLinearDelivery(body: unknown, now = Date.now()): ReadDelivery {
  const timestamp = (body as Json | null)?.webhookTimestamp;
  const webhookId = stringAt(body, 'webhookId');
  if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) return { kind: 'refused', reason: 'webhookTimestamp: is required' };
  if (!webhookId || webhookId.length > 200) return { kind: 'refused', reason: 'webhookId: is required' };
  if (Math.abs(now - timestamp) > REPLAY_WINDOW_MS) {
    return { kind: 'stale', reason: `webhookTimestamp is more than ${REPLAY_WINDOW_MS / 60_000} minutes away: refused as a replay` };
  }
  const deliveryId = `${webhookId}:${timestamp}`;
  const data = objectAt(body, 'data');
  const from = objectAt(body, 'updatedFrom');
  if (
    stringAt(body, 'type') !== 'Issue' ||
    stringAt(body, 'action') !== 'update' ||
    !data ||
    !from ||
    stringAt(from, 'stateId') === undefined
  ) {
    return { kind: 'delivery', deliveryId, event: null };
  }
  const issueId = stringAt(data, 'id');
  const state = objectAt(data, 'state');
  const stateId = stringAt(data, 'stateId') ?? stringAt(state, 'id');
  if (!issueId || !stateId) return { kind: 'refused', reason: 'data.id and data.stateId: are required' };
  return {
    kind: 'delivery',
    deliveryId,
    event: {
      tracker: 'linear',
      action: 'update',
      issue_id: issueId,
      state_id: stateId,
      state_name: (stringAt(state, 'name') ?? stateId).slice(0, 200),
      state_type: stringAt(state, 'type') ?? null,
      title: (stringAt(data, 'title') ?? '').slice(0, 1000),
    },
  };
}
