import type { DeliveryRow } from '../../oltp/deliveries.repo.js';

/** A delivery of a notification to one recipient (README "Notifications"). */
export function presentDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    notification_id: String(row.notification_id),
    type: row.type,
    channel: row.channel,
    recipient: row.recipient,
    integration_id: row.integration_id,
    feedback_id: row.feedback_id,
    feedback_title: row.feedback_title,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
