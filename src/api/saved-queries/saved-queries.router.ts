import { Router } from '@koa/router';
import { z } from 'zod';
import { createSavedQuery, deleteSavedQuery, listSavedQueries, type SavedQueryRow, tokenHolderEmail } from '../../oltp/insights.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { notFound, unauthorized } from '../errors.js';
import type { AppState } from '../state.js';
import { bodySchema, isUuid, parseBody } from '../validation.js';

export const SavedQueryBody = bodySchema({
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must be 1 to 200 characters').max(200, 'must be 1 to 200 characters'),
  sql: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters'),
});
export type SavedQueryBody = z.infer<typeof SavedQueryBody>;

export const presentSavedQuery = (row: SavedQueryRow) => ({
  id: row.id,
  name: row.name,
  sql: row.sql,
  created_by: row.created_by,
  created_at: `${row.created_at.toISOString().slice(0, 19)}Z`,
});

/**
 * A project's saved queries (issue 24): kept in PostgreSQL for its data team, listed newest
 * first; they run through POST /projects/:id/sql like any query, with all of its isolation.
 * Admin token of the owning account, or a member's on Team.
 */
export function savedQueriesRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.get('/projects/:id/saved-queries', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    ctx.body = (await listSavedQueries(sql, project.id)).map(presentSavedQuery);
  });

  router.post('/projects/:id/saved-queries', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const body = parseBody(SavedQueryBody, ctx.request.body);
    const account = ctx.state.account;
    if (!account) throw unauthorized('missing admin bearer token');
    const createdBy = await tokenHolderEmail(sql, account.email, ctx.state.memberId ?? null);
    ctx.body = presentSavedQuery(await createSavedQuery(sql, { projectId: project.id, name: body.name, sql: body.sql, createdBy }));
  });

  router.delete('/projects/:id/saved-queries/:queryId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = ctx.params.queryId ?? '';
    if (!isUuid(id) || !(await deleteSavedQuery(sql, project.id, id))) throw notFound('saved query not found');
    ctx.body = { id, deleted: true };
  });
  return router;
}
