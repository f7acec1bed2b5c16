import { z } from 'zod';
import type { UnsubscribeLink as UnsubscribeLinkType } from '../../oltp/notifications.repo.js';
import { uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';

// Unsubscribe links (README "Notifications")

export const UnsubscribeResponse = z
  .object({
    unsubscribed: z.literal(true),
    feedback_id: uuid.meta({
      description: 'The item whose status-change emails stop for this address (the first, for a changelog email’s link).',
    }),
    feedback_ids: z.array(uuid).meta({
      description:
        'Every item whose status-change emails stop: one for a status-change email’s link, the entry’s items for a changelog email’s.',
    }),
  })
  .meta({ id: 'Unsubscribed' });

export const UnsubscribeLinkResponse = z
  .object({
    feedback_id: uuid.meta({ description: 'The item whose status-change emails the link stops (the first of `items`).' }),
    title: z.string().meta({ description: 'That item’s title.' }),
    email: z.string().meta({ description: 'The address the link was sent to (lowercase).' }),
    subscribed: z.boolean().meta({
      description:
        'Whether the address still gets the status-change emails of the item (of any of the items), as a voter or as the submitter.',
    }),
    items: z.array(z.object({ id: uuid, title: z.string(), subscribed: z.boolean() })).meta({
      description:
        'The items the link stops, each with whether the address still follows it: one for a status-change email, for a changelog email those of its entry the address voted for or submitted. `feedback_id` and `title` are the first one’s.',
    }),
  })
  .meta({ id: 'UnsubscribeLink', description: 'What an unsubscribe link is for. Reading it changes nothing.' });

export type UnsubscribeResponseChecks = [Expect<SameShape<UnsubscribeLinkType, Out<typeof UnsubscribeLinkResponse>>>];

export const DigestUnsubscribeLinkResponse = z
  .object({
    project_id: uuid.meta({ description: 'The project whose weekly digest the link stops.' }),
    project_name: z.string(),
    email: z.string().meta({ description: 'The address the digest was sent to (lowercase).' }),
    subscribed: z.boolean().meta({ description: 'Whether the address still gets the project’s weekly digest.' }),
  })
  .meta({ id: 'DigestUnsubscribeLink', description: 'What a digest’s unsubscribe link is for. Reading it changes nothing.' });

export const DigestUnsubscribeResponse = z.object({ unsubscribed: z.literal(true), project_id: uuid }).meta({ id: 'DigestUnsubscribed' });
