import { Router } from '@koa/router';
import {
  createIntegration,
  deleteIntegration,
  findIntegration,
  listIntegrations,
  updateIntegration,
} from '../../oltp/integrations.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { newSecret, WEBHOOK_SECRET_PREFIX } from '../../core/secrets.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound, paymentRequired } from '../errors.js';
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
export function integrationsRouter({ sql }: ApiDeps): Router<AppState> {
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

  return router;
}
