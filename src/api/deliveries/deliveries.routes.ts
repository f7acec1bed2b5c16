import { z } from 'zod';
import { listDeliveries, retryDelivery } from '../../oltp/deliveries.repo.js';
import { enqueueDeliveries } from '../../workers/notify/deliveries.queue.js';
import { defineRoute } from '../define-route.js';
import { conflict, notFound, paymentRequired } from '../errors.js';
import { defaultError, describe, error, json, ProjectPath } from '../shared/building-blocks.js';
import { presentDelivery } from '../shared/deliveries.presenter.js';
import { DeliveryResponse } from '../shared/deliveries.responses.js';
import { ListDeliveriesQuery } from './deliveries.schema.js';

const deliveryShape = ListDeliveriesQuery.shape;

/**
 * The delivery log of a project's notifications, for its owner (README "Notifications"): what was
 * sent to whom, what is still being retried, what failed for good; and the retry of a failed
 * delivery.
 */
export const deliveryRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/deliveries',
    auth: 'projectAdmin',
    operationId: 'listDeliveries',
    tags: ['Notifications'],
    summary: 'List a project’s notification deliveries',
    description:
      'One row per notification and recipient (member, voter or submitter email; Slack, Discord or webhook integration), newest first. `status=failed` is the list an operator works through.',
    params: ProjectPath,
    query: ListDeliveriesQuery.extend({
      status: describe(deliveryShape.status, 'Only deliveries in this status.'),
      limit: describe(deliveryShape.limit, 'Page size, 1 to 500 (default 50).'),
      offset: describe(deliveryShape.offset, 'Deliveries to skip (default 0).'),
    }),
    responses: {
      200: json('The deliveries.', z.array(DeliveryResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      const rows = await listDeliveries(sql, project.id, query);
      ctx.body = rows.map(presentDelivery);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/deliveries/:deliveryId/retry',
    auth: 'projectAdmin',
    operationId: 'retryDelivery',
    tags: ['Notifications'],
    summary: 'Retry a failed delivery',
    description:
      'Sets a failed delivery back to pending, due now, with a fresh budget of attempts (`attempts` restarts at 0; `last_error` stays until the next attempt). Same delivery id, so receivers can still tell a repeat.',
    params: ProjectPath.extend({
      deliveryId: describe(z.uuid({ error: 'delivery not found' }), 'Delivery id. A malformed id is a 404, like a missing one.'),
    }),
    responses: {
      200: json('The delivery, pending again.', DeliveryResponse),
      402: error('The account’s plan no longer includes the delivery’s channel: integrations need Pro or Team, emails Team.'),
      404: error('No such project, or no such delivery in it.'),
      409: error('The delivery is not failed (pending or delivered).'),
      default: defaultError,
    },
    handler: async (ctx, { sql, deliveryQueue, config, logger }, { project, params }) => {
      const id = params.deliveryId;
      const result = await retryDelivery(sql, project.id, id);
      if (result.kind === 'not_found') throw notFound('delivery not found');
      if (result.kind === 'not_failed') throw conflict(`only a failed delivery can be retried; this one is ${result.status}`);
      if (result.kind === 'not_in_plan') {
        throw paymentRequired(
          result.channel === 'email'
            ? `the ${result.plan} plan does not include emails (Team only)`
            : `the ${result.plan} plan does not include integrations (Pro and Team)`,
        );
      }
      // With Redis the attempt is queued now; without it the workers' poller finds the row, due now.
      // The retry is committed already: a queue that cannot take the job (Redis down) does not undo
      // it, the overdue sweep queues the pending row later.
      if (deliveryQueue) {
        try {
          await enqueueDeliveries(deliveryQueue, [id], config.delivery.maxAttempts);
        } catch (error) {
          logger.warn({ err: error, deliveryId: id }, 'retried delivery not queued (Redis unavailable?); the overdue sweep will queue it');
        }
      }
      ctx.body = presentDelivery(result.delivery);
    },
  }),
];
