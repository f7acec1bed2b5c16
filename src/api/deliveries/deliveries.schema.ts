import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../oltp/deliveries.repo.js';

/** GET /projects/:id/deliveries query, read verbatim. */
export const ListDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(500, 'must be at most 500')
    .default(50),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').default(0),
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;
