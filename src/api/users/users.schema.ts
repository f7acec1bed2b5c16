import { z } from 'zod';
import { SDK_USER_SORTS, SORT_ORDERS } from '../../oltp/sdk-users.repo.js';

/** GET /projects/:id/users query (admin token): one sorted page of the project's SDK users. */
export const ListSdkUsersQuery = z.object({
  sort: z
    .enum(SDK_USER_SORTS, { error: `must be one of ${SDK_USER_SORTS.join(', ')}` })
    .optional()
    .default('last_seen'),
  order: z
    .enum(SORT_ORDERS, { error: `must be one of ${SORT_ORDERS.join(', ')}` })
    .optional()
    .default('desc'),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .optional()
    .default(50),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').optional().default(0),
});
export type ListSdkUsersQuery = z.infer<typeof ListSdkUsersQuery>;
