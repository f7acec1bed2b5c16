import { Router } from '@koa/router';
import { createAccount, updateAccountPlan } from '../oltp/accounts.repo.js';
import { updateProject } from '../oltp/projects.repo.js';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../secrets.js';
import { operatorAuth } from './auth.js';
import type { ApiDeps } from './deps.js';
import { conflict, notFound } from './errors.js';
import { CreateAccountBody, SuspendProjectBody, UpdateAccountBody } from './management.schema.js';
import { presentAccount, presentProject } from './presenters.js';
import type { AppState } from './state.js';
import { isUuid, parseBody } from './validation.js';

/** Operator-only management (DESIGN 3): accounts, plans, suspension. */
export function operatorRouter({ sql, projectKeys, operatorToken }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = operatorAuth(operatorToken);

  router.post('/admin/accounts', auth, async (ctx) => {
    const body = parseBody(CreateAccountBody, ctx.request.body);
    const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
    const account = await createAccount(sql, { ...body, adminTokenHash: hashSecret(adminToken) });
    if (!account) throw conflict('email: an account with this email already exists');
    ctx.body = presentAccount(account, adminToken);
  });

  router.patch('/admin/accounts/:id', auth, async (ctx) => {
    const body = parseBody(UpdateAccountBody, ctx.request.body);
    const id = ctx.params.id ?? '';
    const account = isUuid(id) ? await updateAccountPlan(sql, id, body.plan) : null;
    if (!account) throw notFound('account not found');
    projectKeys.forgetAccount(account.id);
    ctx.body = presentAccount(account);
  });

  router.patch('/admin/projects/:id', auth, async (ctx) => {
    const body = parseBody(SuspendProjectBody, ctx.request.body);
    const id = ctx.params.id ?? '';
    const project = isUuid(id) ? await updateProject(sql, id, { suspended: body.suspended }) : null;
    if (!project) throw notFound('project not found');
    projectKeys.forgetProject(project.id);
    ctx.body = presentProject(project);
  });

  return router;
}
