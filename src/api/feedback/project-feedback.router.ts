import { Router } from '@koa/router';
import { addOwnerReply, listComments } from '../../oltp/comments.repo.js';
import { countFeedbacksByStatus, findFeedback, listFeedbacks, mergeFeedback, updateFeedbackStatus } from '../../oltp/feedback.repo.js';
import { listVoters } from '../../oltp/votes.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import type { AppState, RequestContext } from '../state.js';
import { isUuid, parseBody, parseQuery } from '../validation.js';
import { presentComment, presentFeedback, presentStatusCounts, presentVoters } from './feedback.presenter.js';
import { FeedbackCountsQuery, MergeFeedbackBody, OwnerReplyBody, ProjectFeedbacksQuery, UpdateFeedbackBody } from './feedback.schema.js';

function feedbackIdParam(ctx: RequestContext): string {
  const id = ctx.params.feedbackId ?? '';
  if (!isUuid(id)) throw notFound('feedback not found');
  return id;
}

/** The author of an owner's reply: the token's account, and its member when a member's token is used. */
function replyAuthor(ctx: RequestContext) {
  const account = ctx.state.account;
  if (!account) throw unauthorized('missing admin bearer token');
  return { accountId: account.id, memberId: ctx.state.memberId ?? null };
}

/**
 * Owners manage their projects' feedback (DESIGN 3): list (with title search, counts per status
 * and the sort by voters' MRR), one item, its voters, its comments and their replies, status
 * changes and merges.
 */
export function projectFeedbackRouter({ sql }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.get('/projects/:id/feedbacks', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(ProjectFeedbacksQuery, ctx.query);
    const rows = await listFeedbacks(sql, project.id, query, undefined);
    ctx.body = rows.map(presentFeedback);
  });

  // Registered before /:feedbackId: `counts` is this route, never an item id.
  router.get('/projects/:id/feedbacks/counts', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = parseQuery(FeedbackCountsQuery, ctx.query);
    ctx.body = presentStatusCounts(await countFeedbacksByStatus(sql, project.id, query));
  });

  router.get('/projects/:id/feedbacks/:feedbackId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const row = await findFeedback(sql, project.id, feedbackIdParam(ctx), undefined);
    if (!row) throw notFound('feedback not found');
    ctx.body = presentFeedback(row);
  });

  router.get('/projects/:id/feedbacks/:feedbackId/votes', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = feedbackIdParam(ctx);
    const voters = await listVoters(sql, project.id, id);
    if (!voters) throw notFound('feedback not found');
    ctx.body = presentVoters(id, voters);
  });

  router.get('/projects/:id/feedbacks/:feedbackId/comments', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const rows = await listComments(sql, project.id, feedbackIdParam(ctx));
    if (!rows) throw notFound('feedback not found');
    ctx.body = rows.map(presentComment);
  });

  router.post('/projects/:id/feedbacks/:feedbackId/comments', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const id = feedbackIdParam(ctx);
    const body = parseBody(OwnerReplyBody, ctx.request.body);
    // An archived project is read-only for everyone (SPEC 3), its owner included.
    if (project.archived) throw forbidden('project is archived');
    const comment = await addOwnerReply(sql, project.id, id, { content: body.content, author: replyAuthor(ctx) });
    if (!comment) throw notFound('feedback not found');
    ctx.body = presentComment(comment);
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
