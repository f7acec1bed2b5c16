import { z } from 'zod';
import type { TrackedEventResponse as TrackedEventType } from '../../core/event.js';
import { count, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import { TrackedEventResponse } from '../shared/tracked-event.responses.js';
import type { BatchEventsResult } from './batch-results.js';

// Events (SPEC 2.7); the tracked event itself is shared with the metrics feed (shared/tracked-event.responses.ts).

/** The single-track answer: the stored event, and `success` for the origin's Kotlin SDK. */
export const TrackAnswer = TrackedEventResponse.extend({
  success: z.literal(true).meta({
    description: 'Always true. Not in SPEC 2.7: the origin project’s Kotlin SDK requires it (docs/clients.md).',
  }),
}).meta({ id: 'TrackAnswer', description: 'The tracked event as stored (SPEC 2.7), with `success: true`.' });

const storedId = uuid.meta({
  description: 'The id of the stored event: this event’s, or for a duplicate the first one stored under its eventId.',
});
const DUPLICATE =
  'An event with this `eventId` was already accepted for the project (a retry, or a repeat within the batch): it is not stored again.';
const BatchEventAccepted = z
  .object({ status: z.literal('accepted'), id: storedId })
  .meta({ id: 'BatchEventAccepted', description: 'The event is stored (durable). The default, lean result.' });
const BatchEventDuplicate = z
  .object({ status: z.literal('duplicate'), id: storedId })
  .meta({ id: 'BatchEventDuplicate', description: `${DUPLICATE} The default, lean result.` });
const BatchEventAcceptedEcho = z
  .object({ status: z.literal('accepted'), event: TrackedEventResponse.meta({ description: 'The event as stored.' }) })
  .meta({ id: 'BatchEventAcceptedEcho', description: 'The event is stored (durable). With `echo=true`.' });
const BatchEventDuplicateEcho = z
  .object({
    status: z.literal('duplicate'),
    event: TrackedEventResponse.meta({ description: 'The event first stored under this eventId, not this copy.' }),
  })
  .meta({ id: 'BatchEventDuplicateEcho', description: `${DUPLICATE} With \`echo=true\`.` });
const BatchEventRejected = z
  .object({
    status: z.literal('rejected'),
    reason: z.string().meta({ description: 'The field and the problem, e.g. `userId: is required`.' }),
  })
  .meta({ id: 'BatchEventRejected', description: 'The event is invalid and was not stored; sending it again cannot succeed.' });

export const BatchEventsResponse = z
  .object({
    accepted: count.meta({ description: 'Events stored by this request.' }),
    duplicates: count.meta({ description: 'Events whose eventId was already accepted: not stored again.' }),
    rejected: count.meta({ description: 'Invalid events, not stored.' }),
    results: z
      .array(z.union([BatchEventAccepted, BatchEventDuplicate, BatchEventAcceptedEcho, BatchEventDuplicateEcho, BatchEventRejected]))
      .meta({
        description:
          'What became of each event, one result per event in the order sent: by default its status and the stored event’s `id` (or the `reason` of a refusal); with `echo=true` the stored event whole instead of its `id`.',
      }),
  })
  .meta({ id: 'BatchEventsResult' });

export type EventResponseChecks = [
  Expect<SameShape<TrackedEventType, Out<typeof TrackedEventResponse>>>,
  Expect<SameShape<BatchEventsResult, Out<typeof BatchEventsResponse>>>,
];
