import { apiTime } from '../../core/time.js';
import type { FeedbackPayload, NotificationType } from '../../oltp/notification-payload.js';
import { SIGNATURE_HEADER, signatureHeader } from './signature.js';

/** Idempotency key of every outbound request: the same on each retry of one delivery. */
export const DELIVERY_ID_HEADER = 'X-Feedback-Delivery-Id';
export const EVENT_HEADER = 'X-Feedback-Event';
export const USER_AGENT = 'feedback-service-webhooks/1.0';

/**
 * The body of a generic webhook (README "Webhooks"): the type, the project, the feedback as the
 * API answers it, and for a status change the previous status (and, for a merge, the target).
 */
export function webhookBody(type: NotificationType, projectId: string, payload: FeedbackPayload, sentAt: Date) {
  return {
    type,
    project_id: projectId,
    feedback: payload.feedback,
    ...(type === 'feedback.status_changed' ? { previous_status: payload.previous_status ?? null } : {}),
    ...(payload.merged_into_id ? { merged_into_id: payload.merged_into_id } : {}),
    sent_at: apiTime(sentAt),
  };
}

/** Headers of a generic webhook request; signed when the integration has a secret. */
export function webhookHeaders(deliveryId: string, type: NotificationType, rawBody: string, secret: string | null): Record<string, string> {
  return {
    'user-agent': USER_AGENT,
    [DELIVERY_ID_HEADER]: deliveryId,
    [EVENT_HEADER]: type,
    ...(secret ? { [SIGNATURE_HEADER]: signatureHeader(secret, rawBody) } : {}),
  };
}
