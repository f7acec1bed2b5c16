import { z } from 'zod';
import type { TrackedEventResponse as TrackedEventType } from '../../core/event.js';
import { anyValues } from '../openapi/any-values.js';
import { count, timestamp, uuid } from '../openapi/response-fields.js';
import type { Expect, Out, SameShape } from '../openapi/shape-checks.js';

// Events (SPEC 2.7)

const properties = z
  .record(z.string(), z.unknown())
  .meta(anyValues)
  .nullable()
  .meta({ description: 'The properties object as sent, or null.' });

export const TrackedEventResponse = z
  .object({
    id: uuid.meta({ description: 'The eventId sent by the client, or a server-assigned UUIDv7.' }),
    event_name: z.string(),
    user_id: z.string(),
    properties,
    created_at: timestamp.meta({ description: 'The event’s `timestamp` as sent, or the time the server received it.' }),
  })
  .meta({ id: 'TrackedEvent', description: 'A tracked analytics event (SPEC 2.7).' });

export const BatchEventsResponse = z
  .object({
    accepted: count.meta({ description: 'How many events the batch held (all of them: a batch is accepted whole or not at all).' }),
    events: z.array(TrackedEventResponse).meta({ description: 'The stored events, in the order sent.' }),
  })
  .meta({ id: 'BatchEventsResult' });

export type EventResponseChecks = [Expect<SameShape<TrackedEventType, Out<typeof TrackedEventResponse>>>];
