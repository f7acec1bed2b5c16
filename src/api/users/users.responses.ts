import { z } from 'zod';
import { timestamp, uuid } from '../openapi/response-fields.js';
import type { Expect, Out, SameShape } from '../openapi/shape-checks.js';
import type { presentSdkUser } from './users.presenter.js';

// SDK users (SPEC 2.6)

export const SdkUserResponse = z
  .object({
    id: uuid.meta({ description: 'Internal identifier.' }),
    user_id: z.string().meta({ description: 'The client app’s user identifier.' }),
    mrr: z.number().nullable().meta({ description: 'Monthly recurring revenue.' }),
    first_seen_at: timestamp,
    last_seen_at: timestamp,
  })
  .meta({ id: 'SdkUser', description: 'A user of the client app (SPEC 2.6).' });

export type SdkUserResponseChecks = [Expect<SameShape<ReturnType<typeof presentSdkUser>, Out<typeof SdkUserResponse>>>];
