import { z } from 'zod';
import { anyValues } from './any-values.js';
import { timestamp, uuid } from './response-fields.js';

// A tracked event as the API answers it (SPEC 2.7): by the ingestion routes and the metrics events feed.

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
