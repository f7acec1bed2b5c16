import { Router } from '@koa/router';
import { listFeedbacks, mergeFeedback, updateFeedbackStatus } from '../../oltp/feedback.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { ListFeedbacksQuery, MergeFeedbackBody, UpdateFeedbackBody } from './feedback.schema.js';
import { presentFeedback } from './feedback.presenter.js';
import type { RequestContext, AppState } from '../state.js';
import { isUuid, parseBody, parseQuery } from '../validation.js';

function feedbackIdParam(ctx: RequestContext): string {
  const id = ctx.params.feedbackId ?? '';
  if (!isUuid(id)) throw notFound('feedback not found');
  return id;
}

/** Owners manage their projects' feedback (DESIGN 3): list, change status, merge. */
export function projectFeedbackRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.get('/projects/:id/feedbacks', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(ListFeedbacksQuery, ctx.query);
    const rows = await listFeedbacks(sql, project.id, query, undefined);
    ctx.body = rows.map(presentFeedback);
  });

  router.patch('/projects/:id/feedbacks/:feedbackId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = feedbackIdParam(ctx);
    const body = parseBody(UpdateFeedbackBody, ctx.request.body);
    const result = await updateFeedbackStatus(sql, project.id, id, body);
    if (result.kind === 'not_found') throw notFound('feedback not found');
    if (result.kind === 'reason_needs_rejected') {
      throw badRequest('rejectionReason: only allowed when the status is rejected');
    }
    ctx.body = presentFeedback(result.feedback);
  });

  router.post('/projects/:id/feedbacks/:feedbackId/merge', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = feedbackIdParam(ctx);
    const body = parseBody(MergeFeedbackBody, ctx.request.body);
    const result = await mergeFeedback(sql, project.id, id, body.intoId);
    if (result.kind === 'not_found') throw notFound('feedback not found');
    if (result.kind === 'refused') throw new AppError(result.status, result.reason);
    ctx.body = presentFeedback(result.source);
  });

  return router;
}
