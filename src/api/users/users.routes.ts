import { Router } from '@koa/router';
import { registerSdkUser } from '../../oltp/sdk-users.repo.js';
import { apiKeyAuth, keyProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { RegisterUserBody } from '../feedback/feedback.schema.js';
import { presentSdkUser } from './users.presenter.js';
import type { AppState } from '../state.js';
import { parseBody } from '../validation.js';

/** SPEC 4.8: register or update an SDK user. Allowed on archived projects: it is not feedback. */
export function usersRouter({ sql, projectKeys }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  router.post('/users/register', apiKeyAuth(projectKeys), async (ctx) => {
    const body = parseBody(RegisterUserBody, ctx.request.body);
    const row = await registerSdkUser(sql, keyProject(ctx).id, body);
    ctx.body = presentSdkUser(row);
  });
  return router;
}
