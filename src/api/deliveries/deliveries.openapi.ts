import { z } from 'zod';
import { ADMIN_TOKEN, ProjectPath, defaultError, describe, error, json, type Route } from '../openapi/building-blocks.js';
import { ListDeliveriesQuery } from './deliveries.schema.js';
import { DeliveryResponse } from './deliveries.responses.js';

/** A project's notification deliveries and their retry (README "Notifications"). */
export function registerDeliveryPaths(route: Route) {
  const deliveryShape = ListDeliveriesQuery.shape;
  route({
    method: 'get',
    path: '/projects/{id}/deliveries',
    operationId: 'listDeliveries',
    tags: ['Notifications'],
    summary: 'List a project’s notification deliveries',
    description:
      'One row per notification and recipient (member, voter or submitter email; Slack, Discord or webhook integration), newest first. `status=failed` is the list an operator works through.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath,
      query: ListDeliveriesQuery.extend({
        status: describe(deliveryShape.status, 'Only deliveries in this status.'),
        limit: describe(deliveryShape.limit, 'Page size, 1 to 500 (default 50).'),
        offset: describe(deliveryShape.offset, 'Deliveries to skip (default 0).'),
      }),
    },
    responses: {
      200: json('The deliveries.', z.array(DeliveryResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/deliveries/{deliveryId}/retry',
    operationId: 'retryDelivery',
    tags: ['Notifications'],
    summary: 'Retry a failed delivery',
    description:
      'Sets a failed delivery back to pending, due now, with a fresh budget of attempts (`attempts` restarts at 0; `last_error` stays until the next attempt). Same delivery id, so receivers can still tell a repeat.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath.extend({ deliveryId: describe(z.uuid(), 'Delivery id. A malformed id is a 404, like a missing one.') }),
    },
    responses: {
      200: json('The delivery, pending again.', DeliveryResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      402: error('The account’s plan no longer includes the delivery’s channel: integrations need Pro or Team, emails Team.'),
      404: error('No such project, or no such delivery in it.'),
      409: error('The delivery is not failed (pending or delivered).'),
      default: defaultError,
    },
  });
}
