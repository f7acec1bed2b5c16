import { z } from 'zod';
import { addOwnerReply, listComments } from '../../oltp/comments.repo.js';
import { countFeedbacksByStatus, findFeedback, listFeedbacks, mergeFeedback, updateFeedbackStatus } from '../../oltp/feedback.repo.js';
import { listVoters } from '../../oltp/votes.repo.js';
import { defineRoute } from '../define-route.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { body, defaultError, error, feedbackId, json, ProjectPath, projectId, withFieldDocs } from '../shared/building-blocks.js';
import { presentComment, presentFeedback, presentStatusCounts, presentVoters } from '../shared/feedback.presenter.js';
import { CommentResponse, FeedbackResponse, StatusCountsResponse, VotersResponse } from '../shared/feedback.responses.js';
import type { RequestContext } from '../state.js';
import { FeedbackCountsQuery, MergeFeedbackBody, OwnerReplyBody, ProjectFeedbacksQuery, UpdateFeedbackBody } from './feedback.schema.js';

/** The author of an owner's reply: the token's account, and its member when a member's token is used. */
function replyAuthor(ctx: RequestContext) {
  const account = ctx.state.account;
  if (!account) throw unauthorized('missing admin bearer token');
  return { accountId: account.id, memberId: ctx.state.memberId ?? null };
}

const ProjectFeedbackPath = z.object({ id: projectId, feedbackId });

const notFoundItem = error('No such project, or no such feedback in it (an item of another project included).');

/**
 * Owners manage their projects' feedback (DESIGN 3) with the admin token: list (with title
 * search, counts per status and the sort by voters' MRR), one item, its voters, its comments and
 * their replies, status changes and merges. Deleting an item or a comment: data-rights/deletion.routes.ts.
 */
export const projectFeedbackRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks',
    auth: 'projectAdmin',
    operationId: 'listProjectFeedbacks',
    tags: ['Projects'],
    summary: 'List a project’s feedback',
    description:
      'The query parameters of GET /feedbacks, plus `q` (title search) and `sort=mrr`; `has_voted` is always false here. Counts per status: GET /projects/{id}/feedbacks/counts.',
    params: ProjectPath,
    query: ProjectFeedbacksQuery,
    responses: {
      200: json('The project’s feedback items.', z.array(FeedbackResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      const rows = await listFeedbacks(sql, project.id, query, undefined);
      ctx.body = rows.map(presentFeedback);
    },
  }),
  // Before /:feedbackId: `counts` is this route, never an item id.
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/counts',
    auth: 'projectAdmin',
    operationId: 'countProjectFeedbacks',
    tags: ['Projects'],
    summary: 'Count a project’s feedback per status',
    description:
      'Under the list’s filters other than `status` (category, merged items, title search), so the counts match the list beside them.',
    params: ProjectPath,
    query: FeedbackCountsQuery,
    responses: {
      200: json('Items per status.', StatusCountsResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      ctx.body = presentStatusCounts(await countFeedbacksByStatus(sql, project.id, query));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId',
    auth: 'projectAdmin',
    operationId: 'getProjectFeedback',
    tags: ['Projects'],
    summary: 'Get one feedback item',
    description: 'Merged items included; `has_voted` is always false here.',
    params: ProjectFeedbackPath,
    responses: {
      200: json('The item.', FeedbackResponse),
      404: notFoundItem,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const row = await findFeedback(sql, project.id, params.feedbackId, undefined);
      if (!row) throw notFound('feedback not found');
      ctx.body = presentFeedback(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId/votes',
    auth: 'projectAdmin',
    operationId: 'listFeedbackVoters',
    tags: ['Projects'],
    summary: 'List a feedback item’s voters with their MRR',
    description:
      'Every voter with the email they gave (they are the owner’s users) and their current MRR from POST /users/register, and the total the item’s `total_mrr` answers.',
    params: ProjectFeedbackPath,
    responses: {
      200: json('The voters.', VotersResponse),
      404: notFoundItem,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const id = params.feedbackId;
      const voters = await listVoters(sql, project.id, id);
      if (!voters) throw notFound('feedback not found');
      ctx.body = presentVoters(id, voters);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId/comments',
    auth: 'projectAdmin',
    operationId: 'listProjectFeedbackComments',
    tags: ['Projects'],
    summary: 'List a feedback item’s comments',
    description: 'The comments GET /feedbacks/{id}/comments answers, oldest first, read with the admin token.',
    params: ProjectFeedbackPath,
    responses: {
      200: json('The comments.', z.array(CommentResponse)),
      404: notFoundItem,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const rows = await listComments(sql, project.id, params.feedbackId);
      if (!rows) throw notFound('feedback not found');
      ctx.body = rows.map(presentComment);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/feedbacks/:feedbackId/comments',
    auth: 'projectAdmin',
    operationId: 'replyToFeedback',
    tags: ['Projects'],
    summary: 'Reply to a feedback item as the project’s team',
    description:
      'A comment with `is_admin` true, recorded as written by the token’s account or team member: its `user_id` is `account:<account id>` or `member:<member id>`, never a user of the client app.',
    params: ProjectFeedbackPath,
    body: body(OwnerReplyBody, 'OwnerReplyRequest', 'The author is the token’s account, or its team member.'),
    responses: {
      200: json('The comment.', CommentResponse),
      400: error('Validation failed; the reason names the field.'),
      403: error('The project belongs to another account, or is suspended or archived.'),
      404: notFoundItem,
      409: error('The item is merged: reply on the item it was merged into (`merged_into_id`), where its comments moved.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params, body }) => {
      const id = params.feedbackId;
      // An archived project is read-only for everyone (SPEC 3), its owner included.
      if (project.archived) throw forbidden('project is archived');
      const result = await addOwnerReply(sql, project.id, id, { content: body.content, author: replyAuthor(ctx) });
      if (result.kind === 'not_found') throw notFound('feedback not found');
      if (result.kind === 'merged') throw new AppError(409, mergedReason(result.intoId));
      ctx.body = presentComment(result.comment);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/projects/:id/feedbacks/:feedbackId',
    auth: 'projectAdmin',
    operationId: 'updateFeedbackStatus',
    tags: ['Projects'],
    summary: 'Change a feedback item’s status',
    description:
      'Any of the six statuses may be set, except on a merged item (409: it lives on in its target). `rejectionReason` is accepted only when the resulting status is `rejected`, and is cleared when an item leaves `rejected`.',
    params: ProjectFeedbackPath,
    body: body(
      withFieldDocs(UpdateFeedbackBody, {
        rejectionReason: 'Accepted only when the resulting status is `rejected`; cleared when an item leaves `rejected`.',
      }),
      'UpdateFeedbackStatusRequest',
      'At least one of `status` and `rejectionReason`.',
    ),
    responses: {
      200: json('The item.', FeedbackResponse),
      400: error('Validation failed, or `rejectionReason` for a status other than `rejected`.'),
      404: error('No such project, or no such feedback in it.'),
      409: error('The item is merged: its status is that of the item it was merged into (`merged_into_id`).'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params, body }) => {
      const id = params.feedbackId;
      const result = await updateFeedbackStatus(sql, project.id, id, body);
      if (result.kind === 'not_found') throw notFound('feedback not found');
      if (result.kind === 'reason_needs_rejected') {
        throw badRequest('rejectionReason: only allowed when the status is rejected');
      }
      if (result.kind === 'merged') throw new AppError(409, mergedReason(result.intoId));
      ctx.body = presentFeedback(result.feedback);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/feedbacks/:feedbackId/merge',
    auth: 'projectAdmin',
    operationId: 'mergeFeedback',
    tags: ['Projects'],
    summary: 'Merge a feedback item into another',
    description:
      'The source gets `merged_into_id` and `merged_at` and leaves default lists; the target lists it in `merged_feedback_ids`; votes move to the target (a user who voted on both keeps one). Comments move to the target as the origin’s merge carried them, each prefixed `[Originally on: <source title>] ` (kept: id, author, `created_at`; a comment already carrying a prefix keeps it; one that would pass 2,000 characters is cut, ending in `…`). Items merged earlier into the source now point at the target.',
    params: ProjectFeedbackPath,
    body: body(withFieldDocs(MergeFeedbackBody, { intoId: 'The target item, in the same project.' }), 'MergeFeedbackRequest'),
    responses: {
      200: json('The merged source item.', FeedbackResponse),
      400: error('Validation failed; a merge into itself, or into an item not in this project.'),
      404: error('No such project, or no such feedback in it.'),
      409: error('The source is already merged, or the target is itself merged.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params, body }) => {
      const id = params.feedbackId;
      const result = await mergeFeedback(sql, project.id, id, body.intoId);
      if (result.kind === 'not_found') throw notFound('feedback not found');
      if (result.kind === 'refused') throw new AppError(result.status, result.reason);
      ctx.body = presentFeedback(result.source);
    },
  }),
];

/** The reason of a 409 for a change to a merged item: where the change belongs. */
const mergedReason = (intoId: string) => `feedback is merged into ${intoId}: change that item instead`;
