import { z } from 'zod';
import { deleteComment, deleteFeedback, deleteProject, findProjectDeletion } from '../../oltp/deletions.repo.js';
import { API_PREFIX } from '../api-prefix.js';
import { defineRoute } from '../define-route.js';
import { badRequest, notFound, unauthorized } from '../errors.js';
import { describe, error, feedbackId, json, ProjectPath, projectId } from '../shared/building-blocks.js';
import { presentProjectDeletion } from '../shared/data-rights.presenter.js';
import { dataRightsErrors, ProjectDeletionResponse } from '../shared/data-rights.responses.js';
import { presentComment, presentFeedback } from '../shared/feedback.presenter.js';
import { CommentResponse, FeedbackResponse } from '../shared/feedback.responses.js';
import { DeleteProjectQuery } from './deletion.schema.js';

/**
 * Owners delete what they own (issue 16): a feedback item with its votes and comments, one comment
 * (moderation), or a whole project with all its data in PostgreSQL and ClickHouse.
 */
export const deletionRoutes = [
  defineRoute({
    method: 'delete',
    path: '/projects/:id/feedbacks/:feedbackId',
    auth: 'projectAdmin',
    operationId: 'deleteFeedback',
    tags: ['Data rights'],
    summary: 'Delete a feedback item with its votes and comments',
    description:
      'Deletes the item, its votes and its comments, and the items merged into it (their votes had moved to it). Metrics history in ClickHouse (facts) is kept: it records what happened.',
    params: z.object({ id: projectId, feedbackId }),
    responses: {
      200: json('The deleted item, as it was.', FeedbackResponse),
      404: error('No such project, or no such feedback in it.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const result = await deleteFeedback(sql, project.id, params.feedbackId);
      if (!result) throw notFound('feedback not found');
      ctx.body = presentFeedback(result.feedback);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/feedbacks/:feedbackId/comments/:commentId',
    auth: 'projectAdmin',
    operationId: 'deleteComment',
    tags: ['Data rights'],
    summary: 'Delete a comment (moderation)',
    description: 'The item’s `comment_count` follows.',
    params: z.object({
      id: projectId,
      feedbackId,
      commentId: describe(z.uuid({ error: 'comment not found' }), 'Comment id. A malformed id is a 404.'),
    }),
    responses: {
      200: json('The deleted comment.', CommentResponse),
      404: error('No such project, feedback or comment (of that item).'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const item = params.feedbackId;
      const comment = await deleteComment(sql, project.id, item, params.commentId);
      if (!comment) throw notFound('comment not found');
      ctx.body = presentComment(comment);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id',
    auth: 'projectAdmin',
    projectRules: { allowSuspended: true, ownerOnly: "a project is deleted with the account owner's admin token" },
    operationId: 'deleteProject',
    tags: ['Data rights'],
    summary: 'Delete a project with all its data',
    description:
      'Deletes the project and everything of it in PostgreSQL at once (feedback, votes, comments, SDK users, members and their tokens, integrations, notifications, deliveries); ' +
      'its API key stops working. Its events, facts and rollups in ClickHouse are deleted by a durable job, answered here (follow it at `/projects/deletions/{deletionId}`). ' +
      'The owner’s token only (a team member gets 403). Also allowed for a suspended project.',
    params: ProjectPath,
    query: DeleteProjectQuery,
    responses: {
      202: {
        ...json('The deletion job.', ProjectDeletionResponse),
        headers: { Location: { description: 'The job’s URL.', schema: { type: 'string' as const } } },
      },
      400: error('`confirm` missing or not the project’s name.'),
      403: error('The project belongs to another account, or a team member’s token.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql, projectKeys }, { project, query }) => {
      const { confirm } = query;
      if (confirm !== project.name) throw badRequest('confirm: must be the project’s name, exactly');
      const deletion = await deleteProject(sql, project);
      if (!deletion) throw notFound('project not found');
      // Its API key stops here at once; other processes hear of it through NOTIFY (trigger of 006).
      projectKeys.forgetProject(project.id);
      ctx.status = 202;
      ctx.set('Location', `${API_PREFIX}/projects/deletions/${deletion.id}`);
      ctx.body = presentProjectDeletion(deletion);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/deletions/:deletionId',
    auth: 'adminToken',
    operationId: 'getProjectDeletion',
    tags: ['Data rights'],
    summary: 'Follow a project deletion',
    params: z.object({
      deletionId: describe(
        z.uuid({ error: 'project deletion not found' }),
        'Deletion id. 404 for a malformed id and for one of another account.',
      ),
    }),
    responses: {
      200: json('The deletion job.', ProjectDeletionResponse),
      401: dataRightsErrors.unauthorized,
      404: error('No such deletion of this account’s projects.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { params }) => {
      const account = ctx.state.account;
      if (!account) throw unauthorized('missing admin bearer token');
      const deletion = await findProjectDeletion(sql, account.id, params.deletionId);
      if (!deletion) throw notFound('project deletion not found');
      ctx.body = presentProjectDeletion(deletion);
    },
  }),
];
