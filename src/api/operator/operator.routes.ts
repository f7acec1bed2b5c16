import { Router } from '@koa/router';
import { createAccount, updateAccountPlan } from '../../oltp/accounts.repo.js';
import { listDeadLetters, type DeadLetterRow } from '../../oltp/dead-letters.repo.js';
import { updateProject } from '../../oltp/projects.repo.js';
import { ADMIN_TOKEN_PREFIX, hashSecret, newSecret } from '../../core/secrets.js';
import { operatorAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { conflict, notFound } from '../errors.js';
import { CreateAccountBody, ListDeadLettersQuery, SuspendProjectBody, UpdateAccountBody } from './management.schema.js';
import { presentAccount } from './operator.presenter.js';
import { presentProject } from '../projects/projects.presenter.js';
import type { AppState } from '../state.js';
import { isUuid, parseBody, parseQuery } from '../validation.js';

/** Operator-only management (DESIGN 3): accounts, plans, suspension, dead letters. */
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

  // Rows ClickHouse refused for their data (docs/dead-letters.md), newest first, with the total.
  router.get('/admin/dead-letters', auth, async (ctx) => {
    const query = parseQuery(ListDeadLettersQuery, ctx.query);
    const page = await listDeadLetters(sql, { kind: query.kind, projectId: query.project_id, limit: query.limit, offset: query.offset });
    ctx.body = presentDeadLetters(page, query);
  });

  return router;
}

/** A page of dead letters as the operator route returns it. */
export function presentDeadLetters(page: { total: number; rows: DeadLetterRow[] }, query: { limit: number; offset: number }) {
  return {
    total: page.total,
    limit: query.limit,
    offset: query.offset,
    dead_letters: page.rows.map((row) => ({
      id: row.id,
      kind: row.kind,
      project_id: row.project_id,
      row_key: row.row_key,
      payload: row.payload,
      error_code: row.error_code,
      error_name: row.error_name,
      error: row.error,
      created_at: row.created_at.toISOString(),
    })),
  };
}
