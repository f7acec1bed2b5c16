import { z } from 'zod';
import { DELIVERY_STATUSES } from '../../oltp/deliveries.repo.js';
import { pageQueryFields } from '../shared/building-blocks.js';

/** GET /projects/:id/deliveries query, read verbatim. */
export const ListDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES, { error: `must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
  ...pageQueryFields,
});
export type ListDeliveriesQuery = z.infer<typeof ListDeliveriesQuery>;
