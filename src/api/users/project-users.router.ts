import { Router } from '@koa/router';
import { listSdkUsers } from '../../oltp/sdk-users.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import type { AppState } from '../state.js';
import { parseQuery } from '../validation.js';
import { presentSdkUserPage } from './users.presenter.js';
import { ListSdkUsersQuery } from './users.schema.js';

/** The owner reads a project's SDK users one by one (admin token): MRR, first and last seen, sortable. */
export function projectUsersRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();

  router.get('/projects/:id/users', adminAuth(sql), async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(ListSdkUsersQuery, ctx.query);
    ctx.body = presentSdkUserPage(await listSdkUsers(sql, project.id, query));
  });

  return router;
}
