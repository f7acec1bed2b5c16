import { z } from 'zod';
import { SDK_USER_SORTS, SORT_ORDERS } from '../../oltp/sdk-users.repo.js';
import { describe } from '../shared/building-blocks.js';
import { bodySchema, emailSchema, userIdSchema } from '../validation.js';

const email = emailSchema;

/** GET /projects/:id/users query (admin token): one sorted page of the project's SDK users. */
export const ListSdkUsersQuery = z.object({
  sort: describe(
    z
      .enum(SDK_USER_SORTS, { error: `must be one of ${SDK_USER_SORTS.join(', ')}` })
      .optional()
      .default('last_seen'),
    '`mrr`, `first_seen` (first registration) or `last_seen` (the default: the last POST /users/register for the user; tracked events do not move it). Users without MRR come last in both orders; ties by user id.',
  ),
  order: describe(
    z
      .enum(SORT_ORDERS, { error: `must be one of ${SORT_ORDERS.join(', ')}` })
      .optional()
      .default('desc'),
    '`asc` or `desc` (the default).',
  ),
  limit: describe(
    z.coerce
      .number({ error: 'must be an integer' })
      .int('must be an integer')
      .min(1, 'must be at least 1')
      .max(1000, 'must be at most 1000')
      .optional()
      .default(50),
    'Page size, 1 to 1000 (default 50).',
  ),
  offset: describe(
    z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').optional().default(0),
    'Users to skip (default 0).',
  ),
  q: describe(
    z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters').optional(),
    'Only users whose `user_id`, `email` or `name` contains this text, in any letter case. `%` and `_` are matched as themselves, not as wildcards. At most 200 characters; empty is no search. `total` counts the matching users.',
  ),
});
export type ListSdkUsersQuery = z.infer<typeof ListSdkUsersQuery>;

/**
 * POST /users/register body (SPEC 4.8). An omitted or null `mrr` clears a stored figure. The
 * origin's Kotlin SDK registers `{ email, name, external_id, metadata }`: `external_id` is read as
 * `userId`; `email` and `name` are kept (given as null, they clear the stored one; omitted, they
 * stay); `metadata` is not part of the SDK user and is ignored (docs/clients.md). `userId` may be
 * left out (or null): the registration is then for the request's user, X-User-Token's or X-User-Id's,
 * as `users.register(email, name)` of that SDK sends it (issue 40); the route refuses a body that
 * names nobody.
 */
export const RegisterUserBody = bodySchema(
  {
    userId: userIdSchema.nullish(),
    mrr: z.number({ error: 'must be a number' }).min(0, 'must be >= 0').max(1e12, 'must be at most 1e12').nullable().optional(),
    email: email.nullable().optional(),
    name: z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters').nullable().optional(),
  },
  { externalId: 'userId' },
);
export type RegisterUserBody = z.infer<typeof RegisterUserBody>;
