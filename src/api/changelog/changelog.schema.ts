import { z } from 'zod';
import { apiTime, apiTimeOrNull } from '../../core/time.js';
import { CHANGELOG_STATES, type ChangelogEntryRow } from '../../oltp/changelog.repo.js';
import type { ChangelogDeliveries } from '../../oltp/deliveries.repo.js';
import { describe } from '../shared/building-blocks.js';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import { bodySchema } from '../validation.js';

const title = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const markdownBody = z.string({ error: 'must be a string' }).max(20_000, 'must be at most 20000 characters');
const category = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must not be empty')
  .max(50, 'must be at most 50 characters')
  .nullable();
const linked = z
  .array(z.uuid({ error: 'must be feedback ids (UUIDs)' }), { error: 'must be an array of feedback ids' })
  .max(50, 'must be at most 50 items');
const completeLinked = z.boolean({ error: 'must be true or false' });
const publishAt = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with a time zone' })
  .transform((value) => new Date(value))
  .nullable();

/** POST /projects/:id/changelog: a draft, or a scheduled entry when `publishAt` is given. */
export const CreateChangelogEntryBody = bodySchema({
  title,
  body: markdownBody,
  category: category.optional(),
  linkedFeedbackIds: linked.optional(),
  publishAt: publishAt.optional(),
  completeLinked: completeLinked.optional(),
});
export type CreateChangelogEntryBody = z.infer<typeof CreateChangelogEntryBody>;

/** PATCH /projects/:id/changelog/:entryId: the fields given change; `publishAt: null` makes it a draft again. */
export const UpdateChangelogEntryBody = bodySchema({
  title: title.optional(),
  body: markdownBody.optional(),
  category: category.optional(),
  linkedFeedbackIds: linked.optional(),
  publishAt: publishAt.optional(),
  completeLinked: completeLinked.optional(),
});
export type UpdateChangelogEntryBody = z.infer<typeof UpdateChangelogEntryBody>;

/** POST /projects/:id/changelog/:entryId/publish: optional; `completeLinked` sets the entry's flag first. */
export const PublishChangelogEntryBody = bodySchema({ completeLinked: completeLinked.optional() });
export type PublishChangelogEntryBody = z.infer<typeof PublishChangelogEntryBody>;

export const ChangelogQuery = z.object({
  limit: describe(
    z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(100, 'must be at most 100')
      .optional()
      .default(20),
    'Entries, newest first: 1 to 100 (default 20).',
  ),
});

const LinkedItem = z.object({ id: uuid, title: z.string() }).meta({ id: 'ChangelogLinkedItem' });

export const ChangelogEntryResponse = z
  .object({
    id: uuid,
    title: z.string(),
    body: z.string().meta({ description: 'The Markdown the owner wrote.' }),
    html: z.string().meta({ description: 'The body rendered to sanitized HTML (docs/api-guide.md "Changelog").' }),
    category: z.string().nullable(),
    state: z.enum(CHANGELOG_STATES),
    publish_at: timestamp.nullable().meta({ description: 'When a scheduled entry publishes itself.' }),
    published_at: timestamp.nullable(),
    complete_linked: z.boolean().meta({
      description:
        'Publishing moves the linked items to `completed`, in the same transaction; their status emails are folded into the entry’s (docs/notifications.md).',
    }),
    linked_feedback_ids: z.array(uuid),
    linked_items: z.array(LinkedItem),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ChangelogEntry', description: 'A changelog entry as its owner sees it.' });

export const PublicChangelogEntryResponse = z
  .object({
    id: uuid,
    title: z.string(),
    html: z.string().meta({ description: 'The sanitized HTML of the entry: no script, no event handler, links rel="noopener nofollow".' }),
    category: z.string().nullable(),
    published_at: timestamp,
    linked_items: z.array(LinkedItem).meta({ description: 'The items the entry ships: ids and titles.' }),
  })
  .meta({ id: 'PublicChangelogEntry', description: 'A published changelog entry.' });

export function presentEntry(row: ChangelogEntryRow) {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    html: row.html,
    category: row.category,
    state: row.state,
    publish_at: apiTimeOrNull(row.publish_at),
    published_at: apiTimeOrNull(row.published_at),
    complete_linked: row.complete_linked,
    linked_feedback_ids: row.linked.map((item) => item.id),
    linked_items: row.linked,
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}

export function presentPublicEntry(row: ChangelogEntryRow) {
  return {
    id: row.id,
    title: row.title,
    html: row.html,
    category: row.category,
    published_at: apiTime(row.published_at as Date),
    linked_items: row.linked,
  };
}

const Counts = z
  .object({
    sent: count.meta({
      description: 'Delivered: the email was accepted by the mail server (or written to a file), the integration answered 2xx.',
    }),
    pending: count.meta({ description: 'Still to be sent, or waiting for a retry.' }),
    failed: count.meta({
      description: 'Given up on (attempts spent, or refused: unsubscribed since, a plan below the channel). An operator may retry them.',
    }),
  })
  .meta({ id: 'DeliveryCounts' });

export const ChangelogDeliveriesResponse = z
  .object({
    entry_id: uuid,
    notification: z.enum(['none', 'waiting', 'dispatched']).meta({
      description:
        '`none`: nothing was announced (a draft or a scheduled entry); `waiting`: published, the workers have not yet worked out who hears of it; `dispatched`: they have, the counts are every recipient.',
    }),
    dispatched_at: timestamp.nullable(),
    emails: Counts.meta({ description: 'Emails, one per address (Team: the voters and submitters of the linked items who follow them).' }),
    integrations: Counts.meta({ description: 'Slack, Discord and webhook messages (Pro and Team), one per integration.' }),
  })
  .meta({ id: 'ChangelogDeliveries', description: 'Who was told of a changelog entry, counted from the delivery log.' });

export function presentChangelogDeliveries(entryId: string, told: ChangelogDeliveries) {
  return {
    entry_id: entryId,
    notification: told.notification,
    dispatched_at: apiTimeOrNull(told.dispatched_at),
    emails: told.emails,
    integrations: told.integrations,
  };
}

export type ChangelogShapeChecks = [
  Expect<SameShape<ReturnType<typeof presentChangelogDeliveries>, Out<typeof ChangelogDeliveriesResponse>>>,
  Expect<SameShape<ReturnType<typeof presentEntry>, Out<typeof ChangelogEntryResponse>>>,
  Expect<SameShape<ReturnType<typeof presentPublicEntry>, Out<typeof PublicChangelogEntryResponse>>>,
];
