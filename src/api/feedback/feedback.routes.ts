import { z } from 'zod';
import { PLAN_LIMITS } from '../../core/plans.js';
import { addComment, listComments } from '../../oltp/comments.repo.js';
import { createFeedback, findFeedback, heldFrom, listFeedbacks } from '../../oltp/feedback.repo.js';
import { addVote, removeVote } from '../../oltp/votes.repo.js';
import { keyProject } from '../auth.js';
import { defineRoute, type RouteDeps } from '../define-route.js';
import { badRequest, conflict, forbidden, notFound, paymentRequired } from '../errors.js';
import { actingUser, viewerOf } from '../shared/acting-user.js';
import { publicUserId } from '../shared/anonymous-alias.js';
import { body, defaultError, describe, error, feedbackId, json, optionalBody, withFieldDocs } from '../shared/building-blocks.js';
import { presentComment, presentFeedback, presentVote } from '../shared/feedback.presenter.js';
import { CommentResponse, FeedbackResponse, VoteResponse } from '../shared/feedback.responses.js';
import type { RequestContext } from '../state.js';
import { AddCommentBody, AddVoteBody, CreateFeedbackBody, ListFeedbacksQuery, RemoveVoteBody, RemoveVoteQuery } from './feedback.schema.js';

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

/** Writes to an archived project are refused (SPEC 3): it is read-only. */
function assertWritable(ctx: RequestContext) {
  if (keyProject(ctx).archived) throw forbidden('project is archived');
}

/** The user a write acts as: the signed token's, or the one named in the body (identity/acting-user.ts). */
const acting = (ctx: RequestContext, { sql, rateLimits }: RouteDeps, userId: string) => actingUser(ctx, { sql, rateLimits }, userId);

const FeedbackPath = z.object({ id: feedbackId });

/**
 * What the client routes answer of an item or a comment: anonymous visitors' ids are shown as
 * aliases to everyone but themselves (identity/anonymous-alias.ts, docs/widget.md).
 */
function clientFeedback(ctx: RequestContext, row: Parameters<typeof presentFeedback>[0], viewer: string | undefined) {
  const item = presentFeedback(row);
  return { ...item, user_id: publicUserId(keyProject(ctx).id, item.user_id, viewer) };
}

function clientComment(ctx: RequestContext, row: Parameters<typeof presentComment>[0], viewer: string | undefined) {
  const comment = presentComment(row);
  return { ...comment, user_id: publicUserId(keyProject(ctx).id, comment.user_id, viewer) };
}

/**
 * The user of DELETE /feedbacks/:id/votes: the body's `userId` (SPEC 4.5), or, when no body names
 * one, the `user_id` query parameter (the origin's Kotlin SDK sends no body, docs/clients.md).
 * Both given and different is a 400, never a guess.
 */
function unvotingUser(fromQuery: string | undefined, fromBody: string | undefined): string {
  if (fromBody === undefined) {
    if (fromQuery === undefined) throw badRequest('userId: is required');
    return fromQuery;
  }
  if (fromQuery !== undefined && fromQuery !== fromBody) {
    throw badRequest('userId: must be given once: the body’s userId and the user_id query parameter disagree');
  }
  return fromBody;
}

const UnvoteQuery = z.object({
  user_id: describe(
    RemoveVoteQuery.shape.user_id,
    'The user whose vote is removed, for clients that send DELETE without a body (the origin project’s Kotlin SDK). Read when the body names no user; both given and different is a 400. Also read as `userId`.',
  ),
});

const ViewerHeader = z.object({
  'X-User-Id': describe(
    z.string().optional(),
    'The current user of the client app. It makes `has_voted` personal; without it `has_voted` is false. Sent more than once, equal values count as one; differing values are a 400.',
  ),
});

/**
 * Feedback, votes and comments (SPEC 4.1 to 4.7), authenticated by X-API-Key, secret or
 * publishable: a web page may call them (CORS: cors/client-cors.ts).
 */
export const feedbackRoutes = [
  defineRoute({
    method: 'get',
    path: '/feedbacks',
    auth: 'clientKey',
    cors: true,
    operationId: 'listFeedbacks',
    tags: ['Feedback'],
    summary: 'List feedback',
    query: ListFeedbacksQuery,
    headers: ViewerHeader,
    responses: {
      200: json('The project’s feedback items.', z.array(FeedbackResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice; `X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { query }) => {
      const viewer = viewerOf(ctx);
      const rows = await listFeedbacks(sql, keyProject(ctx).id, query, viewer);
      ctx.body = rows.map((row) => clientFeedback(ctx, row, viewer));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/feedbacks',
    auth: 'clientKey',
    cors: true,
    operationId: 'createFeedback',
    tags: ['Feedback'],
    summary: 'Create feedback',
    description:
      'The creator gets the first vote, so `vote_count` is 1. `has_voted` is true only when `X-User-Id` names the creator, and false without the header (SPEC 2.1). Project members and integrations are notified.',
    headers: ViewerHeader,
    body: body(
      withFieldDocs(CreateFeedbackBody, {
        userId: 'The submitter (the client app’s user id); gets the first vote.',
        userEmail: 'Email of the submitter, for status update notifications. null is the same as absent.',
      }),
      'CreateFeedbackRequest',
    ),
    responses: {
      200: json('The new item.', FeedbackResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      402: error(`The plan’s feedback limit is reached (Free: ${PLAN_LIMITS.free.maxFeedbackPerProject} per project).`),
      403: error('The project is suspended or archived.'),
      default: defaultError,
    },
    handler: async (ctx, deps, { body }) => {
      refuseHoneypot(ctx);
      const viewer = viewerOf(ctx);
      assertWritable(ctx);
      const project = keyProject(ctx);
      const user = await acting(ctx, deps, body.userId);
      const input = { ...body, userEmail: body.userEmail ?? user.email, awaitingApproval: user.anonymous };
      const result = await createFeedback(deps.sql, project.id, input, PLAN_LIMITS[project.plan].maxFeedbackPerProject, viewer);
      if (result.kind === 'limit_reached') {
        throw paymentRequired(`the ${project.plan} plan allows ${result.limit} feedback items per project`);
      }
      ctx.body = clientFeedback(ctx, result.feedback, user.userId);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/feedbacks/:id',
    auth: 'clientKey',
    cors: true,
    operationId: 'getFeedback',
    tags: ['Feedback'],
    summary: 'Get one feedback item',
    params: FeedbackPath,
    headers: ViewerHeader,
    responses: {
      200: json('The item.', FeedbackResponse),
      400: error('`X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params }) => {
      const viewer = viewerOf(ctx);
      const row = await findFeedback(sql, keyProject(ctx).id, params.id, viewer);
      // An anonymous submission awaiting approval is its author's alone until an owner approves it.
      if (!row || heldFrom(row, viewer)) throw notFound('feedback not found');
      ctx.body = clientFeedback(ctx, row, viewer);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/feedbacks/:id/votes',
    auth: 'clientKey',
    cors: true,
    operationId: 'addVote',
    tags: ['Votes'],
    summary: 'Add a vote',
    description: 'Each user may vote once per item. Voting is closed on `completed` and `rejected` items and on merged ones.',
    params: FeedbackPath,
    body: body(
      withFieldDocs(AddVoteBody, {
        email: 'For status change notifications. null is the same as absent.',
        notifyStatusChange: 'Opt in to emails on status changes (voter notifications need the Team plan).',
      }),
      'AddVoteRequest',
    ),
    responses: {
      200: json('The vote state, with `has_voted` true.', VoteResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived, or the item is completed, rejected or merged.'),
      404: error('No such feedback in this project.'),
      409: error('The user has already voted on this item.'),
      default: defaultError,
    },
    handler: async (ctx, deps, { params, body }) => {
      assertWritable(ctx);
      const user = await acting(ctx, deps, body.userId);
      const result = await addVote(deps.sql, keyProject(ctx).id, params.id, { ...body, email: body.email ?? user.email });
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
          ctx.body = presentVote(result.vote);
      }
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/feedbacks/:id/votes',
    auth: 'clientKey',
    cors: true,
    operationId: 'removeVote',
    tags: ['Votes'],
    summary: 'Remove a vote',
    description: 'Idempotent: removing a vote that does not exist answers the current count.',
    params: FeedbackPath,
    query: UnvoteQuery,
    body: optionalBody(
      body(
        RemoveVoteBody,
        'RemoveVoteRequest',
        'A JSON body sent with DELETE (SPEC 4.5); optional when the `user_id` query parameter names the user.',
      ),
    ),
    responses: {
      200: json('The vote state, with `has_voted` false.', VoteResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
    handler: async (ctx, deps, { params, query, body }) => {
      const userId = unvotingUser(query.user_id, body?.userId);
      assertWritable(ctx);
      await acting(ctx, deps, userId);
      const vote = await removeVote(deps.sql, keyProject(ctx).id, params.id, userId);
      if (!vote) throw notFound('feedback not found');
      ctx.body = presentVote(vote);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/feedbacks/:id/comments',
    auth: 'clientKey',
    cors: true,
    operationId: 'listComments',
    tags: ['Comments'],
    summary: 'List comments',
    description:
      'Oldest first; equal timestamps keep insertion order. An anonymous submission awaiting the owner’s approval is a 404 to everyone but its author (`X-User-Id` or the signed token’s user).',
    params: FeedbackPath,
    responses: {
      200: json('The item’s comments.', z.array(CommentResponse)),
      400: error('`X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
    headers: ViewerHeader,
    handler: async (ctx, { sql }, { params }) => {
      const viewer = viewerOf(ctx);
      const rows = await listComments(sql, keyProject(ctx).id, params.id, { userId: viewer });
      if (!rows) throw notFound('feedback not found');
      ctx.body = rows.map((row) => clientComment(ctx, row, viewer));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/feedbacks/:id/comments',
    auth: 'clientKey',
    cors: true,
    operationId: 'addComment',
    tags: ['Comments'],
    summary: 'Add a comment',
    params: FeedbackPath,
    body: body(withFieldDocs(AddCommentBody, { isAdmin: 'Marks a comment by the app’s team.' }), 'AddCommentRequest'),
    responses: {
      200: json('The new comment.', CommentResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
    handler: async (ctx, deps, { params, body }) => {
      refuseHoneypot(ctx);
      assertWritable(ctx);
      await acting(ctx, deps, body.userId);
      if (body.isAdmin && ctx.state.publishableKey) throw forbidden('isAdmin: a publishable key cannot post as the app’s team');
      const comment = await addComment(deps.sql, keyProject(ctx).id, params.id, body);
      if (!comment) throw notFound('feedback not found');
      ctx.body = clientComment(ctx, comment, body.userId);
    },
  }),
];
