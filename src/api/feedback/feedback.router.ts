import { Router } from '@koa/router';
import { PLAN_LIMITS } from '../../core/plans.js';
import { addComment, listComments } from '../../oltp/comments.repo.js';
import { createFeedback, findFeedback, listFeedbacks } from '../../oltp/feedback.repo.js';
import { addVote, removeVote } from '../../oltp/votes.repo.js';
import { apiKeyAuth, keyProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, conflict, forbidden, notFound, paymentRequired } from '../errors.js';
import { actingUser, viewerOf as signedViewer } from '../identity/acting-user.js';
import type { AppState, RequestContext } from '../state.js';
import { isUuid, parseBody, parseQuery } from '../validation.js';
import { viewerOf as headerViewer } from '../viewer.js';
import { presentComment, presentFeedback } from './feedback.presenter.js';
import { AddCommentBody, AddVoteBody, CreateFeedbackBody, ListFeedbacksQuery, RemoveVoteBody } from './feedback.schema.js';

/**
 * The X-User-Id header drives has_voted (SPEC 2.1); an empty header is no user. A signed token's
 * user takes its place (docs/widget.md).
 */
const viewerOf = (ctx: RequestContext) => signedViewer(ctx, headerViewer(ctx));

/**
 * The public board's hidden field: people never see it, naive bots fill it in. Only requests with
 * the publishable key (web pages) are checked, so SPEC clients are untouched.
 */
function refuseHoneypot(ctx: RequestContext) {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  if (ctx.state.publishableKey && typeof body?.website === 'string' && body.website !== '') {
    throw badRequest('website: must be empty');
  }
}

/** A malformed id cannot name an item, so it is a 404 like any missing one. */
function feedbackId(ctx: RequestContext): string {
  const id = ctx.params.id ?? '';
  if (!isUuid(id)) throw notFound('feedback not found');
  return id;
}

/** Writes to an archived project are refused (SPEC 3): it is read-only. */
function assertWritable(ctx: RequestContext) {
  if (keyProject(ctx).archived) throw forbidden('project is archived');
}

/** SPEC 4.1 to 4.7: feedback, votes and comments, authenticated by X-API-Key. */
export function feedbackRouter({ sql, projectKeys, rateLimits }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = apiKeyAuth(projectKeys, { acceptsPublishableKey: true });
  const acting = (ctx: RequestContext, userId: string) => actingUser(ctx, { sql, rateLimits }, userId);

  router.get('/feedbacks', auth, async (ctx) => {
    const query = parseQuery(ListFeedbacksQuery, ctx.query);
    const rows = await listFeedbacks(sql, keyProject(ctx).id, query, viewerOf(ctx));
    ctx.body = rows.map(presentFeedback);
  });

  router.post('/feedbacks', auth, async (ctx) => {
    refuseHoneypot(ctx);
    const body = parseBody(CreateFeedbackBody, ctx.request.body);
    const viewer = viewerOf(ctx);
    assertWritable(ctx);
    const project = keyProject(ctx);
    const user = await acting(ctx, body.userId);
    const input = { ...body, userEmail: body.userEmail ?? user.email, awaitingApproval: user.anonymous };
    const result = await createFeedback(sql, project.id, input, PLAN_LIMITS[project.plan].maxFeedbackPerProject, viewer);
    if (result.kind === 'limit_reached') {
      throw paymentRequired(`the ${project.plan} plan allows ${result.limit} feedback items per project`);
    }
    ctx.body = presentFeedback(result.feedback);
  });

  router.get('/feedbacks/:id', auth, async (ctx) => {
    const viewer = viewerOf(ctx);
    const row = await findFeedback(sql, keyProject(ctx).id, feedbackId(ctx), viewer);
    // An anonymous submission awaiting approval is its author's alone until an owner approves it.
    if (!row || (row.awaiting_approval && row.user_id !== viewer)) throw notFound('feedback not found');
    ctx.body = presentFeedback(row);
  });

  router.post('/feedbacks/:id/votes', auth, async (ctx) => {
    const id = feedbackId(ctx);
    const body = parseBody(AddVoteBody, ctx.request.body);
    assertWritable(ctx);
    const user = await acting(ctx, body.userId);
    const result = await addVote(sql, keyProject(ctx).id, id, { ...body, email: body.email ?? user.email });
    switch (result.kind) {
      case 'not_found':
        throw notFound('feedback not found');
      case 'voting_closed':
        throw forbidden(`voting is closed on ${result.status} feedback`);
      case 'merged':
        throw forbidden(`feedback was merged into ${result.mergedIntoId}; vote there instead`);
      case 'already_voted':
        throw conflict('user has already voted on this feedback');
      case 'voted':
        ctx.body = result.vote;
    }
  });

  router.delete('/feedbacks/:id/votes', auth, async (ctx) => {
    const id = feedbackId(ctx);
    const body = parseBody(RemoveVoteBody, ctx.request.body);
    assertWritable(ctx);
    await acting(ctx, body.userId);
    const vote = await removeVote(sql, keyProject(ctx).id, id, body.userId);
    if (!vote) throw notFound('feedback not found');
    ctx.body = vote;
  });

  router.get('/feedbacks/:id/comments', auth, async (ctx) => {
    const rows = await listComments(sql, keyProject(ctx).id, feedbackId(ctx));
    if (!rows) throw notFound('feedback not found');
    ctx.body = rows.map(presentComment);
  });

  router.post('/feedbacks/:id/comments', auth, async (ctx) => {
    const id = feedbackId(ctx);
    refuseHoneypot(ctx);
    const body = parseBody(AddCommentBody, ctx.request.body);
    assertWritable(ctx);
    await acting(ctx, body.userId);
    if (body.isAdmin && ctx.state.publishableKey) throw forbidden('isAdmin: a publishable key cannot post as the app’s team');
    const comment = await addComment(sql, keyProject(ctx).id, id, body);
    if (!comment) throw notFound('feedback not found');
    ctx.body = presentComment(comment);
  });

  return router;
}
