import { z } from 'zod';
import { count, timestamp, uuid } from '../openapi/response-fields.js';
import type { Expect, Out, SameShape } from '../openapi/shape-checks.js';
import type { presentSdkUser, presentSdkUserPage } from './users.presenter.js';

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

export const SdkUserPageResponse = z
  .object({
    total: count.meta({ description: 'SDK users of the project in all (every page).' }),
    users: z.array(SdkUserResponse),
  })
  .meta({ id: 'SdkUserPage', description: 'One page of a project’s SDK users, in the order asked for.' });

export type SdkUserResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentSdkUser>, Out<typeof SdkUserResponse>>>,
  Expect<SameShape<ReturnType<typeof presentSdkUserPage>, Out<typeof SdkUserPageResponse>>>,
];
