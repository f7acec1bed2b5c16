import { Router } from '@koa/router';
import {
  createIntegration,
  deleteIntegration,
  findIntegration,
  listIntegrations,
  updateIntegration,
} from '../../oltp/integrations.repo.js';
import { recordTestMessage } from '../../oltp/integration-test.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { findDelivery } from '../../oltp/deliveries.repo.js';
import { enqueueDeliveries } from '../../workers/notify/deliveries.queue.js';
import { presentDelivery } from '../deliveries/deliveries.presenter.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { newSecret, WEBHOOK_SECRET_PREFIX } from '../../core/secrets.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, notFound, paymentRequired } from '../errors.js';
import { CreateIntegrationBody, UpdateIntegrationBody } from './integrations.schema.js';
import { presentIntegration } from './integrations.presenter.js';
import type { RequestContext, AppState } from '../state.js';
import { camelKeys, isUuid, parseBody } from '../validation.js';

function requireIntegrationsPlan(project: ProjectWithPlan) {
  if (!PLAN_LIMITS[project.plan].integrations) throw paymentRequired('integrations require the Pro or Team plan');
}

function integrationIdParam(ctx: RequestContext): string {
  const id = ctx.params.integrationId ?? '';
  if (!isUuid(id)) throw notFound('integration not found');
  return id;
}

/**
 * Slack, Discord and signed webhook integrations of a project (SPEC 8.2: Pro and Team). Creating
 * and changing need the plan; after a downgrade the rows are kept, listed and removable, and the
 * delivery workers check the plan when they send.
 */
export function integrationsRouter({ sql, deliveryQueue, config, logger }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.post('/projects/:id/integrations', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    requireIntegrationsPlan(project);
    const body = parseBody(CreateIntegrationBody, ctx.request.body);
    if (body.secret !== undefined && body.kind !== 'webhook') throw badRequest('secret: only webhook integrations have a secret');
    // A webhook is always signed: without a secret of the owner's, the server makes one and shows it once.
    const generated = body.kind === 'webhook' && body.secret === undefined ? newSecret(WEBHOOK_SECRET_PREFIX) : undefined;
    const integration = await createIntegration(sql, {
      projectId: project.id,
      kind: body.kind,
      url: body.url,
      secret: body.secret ?? generated ?? null,
      events: body.events,
      enabled: body.enabled,
    });
    ctx.body = presentIntegration(integration, generated);
  });

  router.get('/projects/:id/integrations', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const rows = await listIntegrations(sql, project.id);
    ctx.body = rows.map((row) => presentIntegration(row));
  });

  router.patch('/projects/:id/integrations/:integrationId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    requireIntegrationsPlan(project);
    const id = integrationIdParam(ctx);
    if (Object.hasOwn(camelKeys(ctx.request.body) ?? {}, 'kind')) {
      throw badRequest('kind: cannot be changed (delete the integration and create another)');
    }
    const body = parseBody(UpdateIntegrationBody, ctx.request.body);
    const current = await findIntegration(sql, project.id, id);
    if (!current) throw notFound('integration not found');
    if (body.secret !== undefined && current.kind !== 'webhook') throw badRequest('secret: only webhook integrations have a secret');
    const updated = await updateIntegration(sql, project.id, id, body);
    if (!updated) throw notFound('integration not found');
    ctx.body = presentIntegration(updated);
  });

  router.delete('/projects/:id/integrations/:integrationId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const integration = await deleteIntegration(sql, project.id, integrationIdParam(ctx));
    if (!integration) throw notFound('integration not found');
    ctx.body = presentIntegration(integration);
  });

  // "Send test": one message to this integration through the ordinary deliveries (the SSRF guard
  // and retries at delivery time, an entry in the delivery log); answers the pending delivery.
  router.post('/projects/:id/integrations/:integrationId/test', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    requireIntegrationsPlan(project);
    const integration = await findIntegration(sql, project.id, integrationIdParam(ctx));
    if (!integration) throw notFound('integration not found');
    if (!integration.enabled) throw conflict('the integration is disabled: enable it to send a test');
    const deliveryId = await recordTestMessage(sql, integration);
    // As for a retry: with Redis the attempt is queued now; without it the poller finds the row,
    // due now. A queue that cannot take the job leaves it to the overdue sweep.
    if (deliveryQueue) {
      try {
        await enqueueDeliveries(deliveryQueue, [deliveryId], config.delivery.maxAttempts);
      } catch (error) {
        logger.warn({ err: error, deliveryId }, 'test delivery not queued (Redis unavailable?); the overdue sweep will queue it');
      }
    }
    const delivery = await findDelivery(sql, project.id, deliveryId);
    if (!delivery) throw notFound('integration not found');
    ctx.body = presentDelivery(delivery);
  });

  return router;
}
