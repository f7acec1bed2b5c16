import { z } from 'zod';
import { DELIVERY_CHANNELS, DELIVERY_STATUSES } from '../../oltp/deliveries.repo.js';
import { NOTIFICATION_TYPES } from '../../oltp/notification-payload.js';
import type { presentDelivery } from './deliveries.presenter.js';
import { count, timestamp, uuid } from './response-fields.js';
import type { Expect, Out, SameShape } from './shape-checks.js';

// Notification deliveries (README "Notifications")

export const DeliveryResponse = z
  .object({
    id: uuid.meta({ description: 'The delivery id: sent as `X-Feedback-Delivery-Id` to webhooks and used as the email Message-ID.' }),
    notification_id: z.string().meta({ description: 'The notification (one change of one item) this delivery belongs to.' }),
    type: z.enum(NOTIFICATION_TYPES),
    channel: z.enum(DELIVERY_CHANNELS),
    recipient: z.string().meta({ description: 'The email address, or the integration id.' }),
    integration_id: uuid
      .nullable()
      .meta({ description: 'The integration, for Slack, Discord and webhook deliveries; null for emails and for deleted integrations.' }),
    feedback_id: uuid
      .nullable()
      .meta({ description: 'The feedback item the notification is about (it may have been deleted since); null for a changelog entry’s.' }),
    feedback_title: z.string().nullable().meta({ description: 'That item’s title when the notification was made: what the message said.' }),
    changelog_entry_id: uuid
      .nullable()
      .meta({ description: 'The changelog entry a `changelog.published` notification announces; null for other types.' }),
    changelog_entry_title: z.string().nullable().meta({ description: 'That entry’s title as it was announced.' }),
    status: z.enum(DELIVERY_STATUSES).meta({
      description: '`pending` (queued or waiting for a retry), `delivered`, or `failed` (attempts spent or a permanent refusal).',
    }),
    attempts: count.meta({ description: 'Attempts made since the delivery was created or last retried by an operator.' }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed; null once delivered.' }),
    next_attempt_at: timestamp.nullable().meta({ description: 'When a pending delivery is due; null otherwise.' }),
    delivered_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Delivery', description: 'A notification’s delivery to one recipient: an email, a Slack or Discord message, or a webhook.' });

export type DeliveryResponseChecks = [Expect<SameShape<ReturnType<typeof presentDelivery>, Out<typeof DeliveryResponse>>>];
