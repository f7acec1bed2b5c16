import { Router } from '@koa/router';
import { createProject, listProjects, replaceApiKey, updateProject, type Project } from '../../oltp/projects.repo.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { API_KEY_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { paymentRequired, unauthorized } from '../errors.js';
import { CreateProjectBody, UpdateProjectBody } from '../operator/management.schema.js';
import { presentProject } from './projects.presenter.js';
import type { RequestContext, AppState } from '../state.js';
import { parseBody } from '../validation.js';

function accountOf(ctx: RequestContext) {
  const account = ctx.state.account;
  if (!account) throw unauthorized('missing admin bearer token');
  return account;
}

/** Projects of the token's account (DESIGN 3). */
export function projectsRouter({ sql, projectKeys }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.post('/projects', auth, async (ctx) => {
    const body = parseBody(CreateProjectBody, ctx.request.body);
    const account = accountOf(ctx);
    const apiKey = newSecret(API_KEY_PREFIX);
    const result = await createProject(sql, {
      accountId: account.id,
      name: body.name,
      apiKeyHash: hashSecret(apiKey),
      maxProjects: PLAN_LIMITS[account.plan].maxProjects,
    });
    if (result.kind === 'limit_reached') {
      throw paymentRequired(`the ${account.plan} plan allows ${result.limit} project${result.limit === 1 ? '' : 's'}`);
    }
    ctx.body = presentProject(result.project, apiKey);
  });

  router.get('/projects', auth, async (ctx) => {
    const rows = await listProjects(sql, accountOf(ctx).id);
    ctx.body = rows.map((row) => presentProject(row));
  });

  router.get('/projects/:id', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '', { allowSuspended: true });
    ctx.body = presentProject(project);
  });

  router.patch('/projects/:id', auth, async (ctx) => {
    const body = parseBody(UpdateProjectBody, ctx.request.body);
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '', { allowSuspended: true });
    const updated = (await updateProject(sql, project.id, body)) as Project;
    projectKeys.forgetProject(project.id);
    ctx.body = presentProject(updated);
  });

  router.post('/projects/:id/api-keys', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const apiKey = newSecret(API_KEY_PREFIX);
    const updated = (await replaceApiKey(sql, project.id, hashSecret(apiKey))) as Project;
    // The old key stops here at once; other processes hear of it through NOTIFY.
    projectKeys.forgetProject(project.id);
    ctx.body = presentProject(updated, apiKey);
  });

  return router;
}
