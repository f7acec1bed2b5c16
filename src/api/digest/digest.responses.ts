import { z } from 'zod';
import type { DigestContent } from '../../core/digest.js';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';

// The weekly digest (docs/notifications.md "The weekly digest")

const Item = z.object({
  id: uuid,
  title: z.string(),
  status: z.string(),
  vote_count: count,
  total_mrr: z.number().nullable().meta({ description: 'The voters’ MRR summed, as the item’s total_mrr; null when none has one.' }),
});
const Change = Item.extend({
  previous_status: z.string().meta({ description: 'The status before the week’s first change.' }),
  changes: count,
  changed_at: z.string().meta({ description: 'The week’s last change of the item (ISO 8601).' }),
});
const Figure = z.object({
  value: z.number(),
  previous: z.number().meta({ description: 'The same days of the week before.' }),
  change: z.number().nullable().meta({ description: '(value − previous) / previous; null when previous is 0.' }),
});

export const DigestContentResponse = z.object({
  project: z.object({ id: uuid, name: z.string() }),
  week: z.object({
    date_from: z.iso.date().meta({ description: 'Monday.' }),
    date_to: z.iso.date().meta({ description: 'Sunday, or today for the week so far.' }),
    complete: z.boolean().meta({ description: 'false for the week so far.' }),
  }),
  feedback: z.object({
    new_count: count.meta({ description: 'Items created in the week: the metrics’ `feedback_count` for the same days.' }),
    top_by_votes: z.array(Item).meta({ description: 'The week’s new items (merged ones left out) with the most votes, at most 5.' }),
    top_by_mrr: z.array(Item).meta({ description: 'The week’s new items with the most voters’ MRR, at most 5 (none without MRR).' }),
  }),
  status_changes: z
    .object({ count, items: z.array(Change) })
    .meta({ description: 'Items whose status changed in the week; at most 20 listed.' }),
  shipped: z.object({ count, items: z.array(Change) }).meta({ description: 'Items whose last change in the week made them completed.' }),
  activity: z.object({ events: Figure, unique_users: Figure, sessions: Figure }).meta({
    description:
      'The metrics summary’s `event_count`, `unique_event_users` and `sessions` for the week’s days, and for the same days one week earlier.',
  }),
  alerts_fired: z.array(
    z.object({
      alert_id: uuid,
      name: z.string(),
      interval_start: timestamp,
      value: z.number().nullable(),
      fired_at: timestamp,
    }),
  ),
});

export const DigestPreviewResponse = DigestContentResponse.extend({
  subject: z.string().meta({ description: 'The email’s subject.' }),
  html: z.string().meta({ description: 'The email’s HTML, as it would be sent (without a recipient’s unsubscribe link).' }),
  text: z.string().meta({ description: 'The email’s plain-text part.' }),
}).meta({ id: 'DigestPreview', description: 'The digest of the week so far, and its rendering.' });

export const DigestSettingResponse = z
  .object({
    enabled: z.boolean(),
    email: z.string().meta({ description: 'Where the digest goes: the owner’s or the member’s address.' }),
    role: z.enum(['owner', 'member']),
  })
  .meta({ id: 'DigestSetting', description: 'The caller’s own digest setting for the project.' });

export type DigestResponseChecks = [Expect<SameShape<DigestContent, Out<typeof DigestContentResponse>>>];
