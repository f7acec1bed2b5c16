import { apiTime, apiTimeOrNull } from '../../core/time.js';
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
    changelog_entry_id: row.changelog_entry_id,
    changelog_entry_title: row.changelog_entry_title,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? apiTime(row.next_attempt_at) : null,
    delivered_at: apiTimeOrNull(row.delivered_at),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
