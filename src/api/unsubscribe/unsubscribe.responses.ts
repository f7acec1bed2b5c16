import { z } from 'zod';
import type { UnsubscribeLink as UnsubscribeLinkType } from '../../oltp/notifications.repo.js';
import { uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';

// Unsubscribe links (README "Notifications")

export const UnsubscribeResponse = z
  .object({
    unsubscribed: z.literal(true),
    feedback_id: uuid.meta({ description: 'The item whose status-change emails stop for this address.' }),
  })
  .meta({ id: 'Unsubscribed' });

export const UnsubscribeLinkResponse = z
  .object({
    feedback_id: uuid.meta({ description: 'The item whose status-change emails the link stops.' }),
    title: z.string().meta({ description: 'The item’s title.' }),
    email: z.string().meta({ description: 'The address the link was sent to (lowercase).' }),
    subscribed: z
      .boolean()
      .meta({ description: 'Whether the address still gets the item’s status-change emails (as a voter or as the submitter).' }),
  })
  .meta({ id: 'UnsubscribeLink', description: 'What an unsubscribe link is for. Reading it changes nothing.' });

export type UnsubscribeResponseChecks = [Expect<SameShape<UnsubscribeLinkType, Out<typeof UnsubscribeLinkResponse>>>];
