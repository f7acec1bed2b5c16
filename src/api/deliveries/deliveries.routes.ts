import { Router } from '@koa/router';
import { listDeliveries, retryDelivery } from '../../oltp/deliveries.repo.js';
import { enqueueDeliveries } from '../../workers/notify/deliveries.queue.js';
import { adminAuth, ownedProject } from '../auth.js';
import { ListDeliveriesQuery } from './deliveries.schema.js';
import type { ApiDeps } from '../deps.js';
import { conflict, notFound, paymentRequired } from '../errors.js';
import { presentDelivery } from './deliveries.presenter.js';
import type { AppState } from '../state.js';
import { isUuid, parseQuery } from '../validation.js';

/**
 * The delivery log of a project's notifications, for its owner: what was sent to whom, what is
 * still being retried, what failed for good; and the retry of a failed delivery.
 */
export function deliveriesRouter({ sql, deliveryQueue, config, logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.get('/projects/:id/deliveries', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(ListDeliveriesQuery, ctx.query);
    const rows = await listDeliveries(sql, project.id, query);
    ctx.body = rows.map(presentDelivery);
  });

  router.post('/projects/:id/deliveries/:deliveryId/retry', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = ctx.params.deliveryId ?? '';
    if (!isUuid(id)) throw notFound('delivery not found');
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
  });

  return router;
}
