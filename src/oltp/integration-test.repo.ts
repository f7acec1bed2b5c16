import type { Sql } from './db.js';
import type { DeliveryChannel } from './deliveries.repo.js';
import type { FeedbackPayload } from './notification-payload.js';

/** The id a sample item carries: the nil UUID, which no stored item has. */
export const SAMPLE_FEEDBACK_ID = '00000000-0000-0000-0000-000000000000';

/**
 * The payload of a test message: a sample item in the shape every message carries, so a
 * receiver can check its parsing, plainly marked as a test in its title and description.
 */
export function testMessagePayload(now: Date): FeedbackPayload {
  const at = `${now.toISOString().slice(0, 19)}Z`;
  return {
    feedback: {
      id: SAMPLE_FEEDBACK_ID,
      title: 'Test message: this integration works',
      description: 'Sent with "Send test" from the dashboard. No feedback item was created; the next messages will be real ones.',
      status: 'pending',
      category: 'other',
      user_id: 'test',
      user_email: null,
      vote_count: 0,
      has_voted: false,
      comment_count: 0,
      total_mrr: null,
      created_at: at,
      updated_at: at,
      rejection_reason: null,
      merged_into_id: null,
      merged_at: null,
      merged_feedback_ids: null,
    },
  };
}

/**
 * Records a test message for one integration: an `integration.test` notification, written
 * already dispatched (the dispatcher never expands it to other recipients), and its one delivery
 * to this integration, pending and due now. Returns the delivery's id; the delivery workers send
 * it like any other.
 */
export async function recordTestMessage(
  sql: Sql,
  integration: { id: string; project_id: string; kind: DeliveryChannel },
  now = new Date(),
): Promise<string> {
  return sql.begin(async (tx) => {
    const payload = testMessagePayload(now);
    const [notification] = await tx<{ id: string }[]>`
      insert into notifications (project_id, type, payload, dispatched_at)
      values (${integration.project_id}, 'integration.test', ${tx.json(JSON.parse(JSON.stringify(payload)))}, now())
      returning id`;
    const [delivery] = await tx<{ id: string }[]>`
      insert into deliveries (notification_id, project_id, channel, recipient, integration_id)
      values (${notification?.id ?? null}, ${integration.project_id}, ${integration.kind}, ${integration.id}, ${integration.id})
      returning id`;
    return (delivery as { id: string }).id;
  });
}
