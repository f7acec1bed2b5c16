import { z } from 'zod';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentPublicSdkUser, presentRegisteredUser, presentSdkUser, presentSdkUserPage } from './users.presenter.js';

// SDK users (SPEC 2.6)

const userId = z.string().meta({ description: 'The client app’s user identifier.' });
const externalId = z.string().meta({
  description: 'The same as `user_id`. Not in SPEC 2.6: the origin project’s Kotlin SDK reads it (docs/clients.md).',
});

export const SdkUserResponse = z
  .object({
    id: uuid.meta({ description: 'Internal identifier.' }),
    user_id: userId,
    external_id: externalId,
    mrr: z.number().nullable().meta({ description: 'Monthly recurring revenue.' }),
    email: z.string().nullable().meta({
      description:
        'The email the user registered with (`email` of POST /users/register), if any. Not in SPEC 2.6. In the answer to POST /users/register: the one that request sent.',
    }),
    name: z.string().nullable().meta({
      description:
        'The display name the user registered with (`name` of POST /users/register), if any. Not in SPEC 2.6. In the answer to POST /users/register: the one that request sent.',
    }),
    first_seen_at: timestamp,
    last_seen_at: timestamp,
  })
  .meta({ id: 'SdkUser', description: 'A user of the client app (SPEC 2.6).' });

export const PublicSdkUserResponse = z
  .object({
    id: uuid.meta({ description: 'Internal identifier.' }),
    user_id: userId,
    external_id: externalId,
    first_seen_at: timestamp,
    last_seen_at: timestamp,
  })
  .meta({
    id: 'PublicSdkUser',
    description: 'An SDK user as anyone with the API key may read it: no email, name or MRR (docs/clients.md).',
  });

export const SdkUserPageResponse = z
  .object({
    total: count.meta({ description: 'SDK users of the project in all (every page).' }),
    users: z.array(SdkUserResponse),
  })
  .meta({ id: 'SdkUserPage', description: 'One page of a project’s SDK users, in the order asked for.' });

export type SdkUserResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentSdkUser>, Out<typeof SdkUserResponse>>>,
  Expect<SameShape<ReturnType<typeof presentRegisteredUser>, Out<typeof SdkUserResponse>>>,
  Expect<SameShape<ReturnType<typeof presentPublicSdkUser>, Out<typeof PublicSdkUserResponse>>>,
  Expect<SameShape<ReturnType<typeof presentSdkUserPage>, Out<typeof SdkUserPageResponse>>>,
];
