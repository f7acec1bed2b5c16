import { Router } from '@koa/router';
import { findErasure, requestErasure } from '../../oltp/erasures.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound } from '../errors.js';
import type { AppState } from '../state.js';
import { isUuid, userIdSchema } from '../validation.js';
import { presentErasure } from './data-rights.presenter.js';

/**
 * Erasure of an SDK user's data (GDPR Art. 17, docs/data-rights.md): the request records a
 * durable job and answers 202 with it; the data-rights worker carries it out step by step.
 */
export function erasureRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.delete('/projects/:id/users/:userId', auth, async (ctx) => {
    // A suspended project can still be asked to erase: the law does not wait for a reinstatement.
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '', { allowSuspended: true });
    const parsed = userIdSchema.safeParse(ctx.params.userId);
    if (!parsed.success) throw badRequest(`userId: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    const { erasure } = await requestErasure(sql, project.id, parsed.data);
    ctx.status = 202;
    ctx.set('Location', `/api/v1/projects/${project.id}/erasures/${erasure.id}`);
    ctx.body = presentErasure(erasure);
  });

  router.get('/projects/:id/erasures/:erasureId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '', { allowSuspended: true });
    const id = ctx.params.erasureId ?? '';
    const erasure = isUuid(id) ? await findErasure(sql, project.id, id) : null;
    if (!erasure) throw notFound('erasure not found');
    ctx.body = presentErasure(erasure);
  });

  return router;
}
