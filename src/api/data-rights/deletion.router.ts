import { Router } from '@koa/router';
import { deleteComment, deleteFeedback, deleteProject, findProjectDeletion } from '../../oltp/deletions.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { presentComment, presentFeedback } from '../feedback/feedback.presenter.js';
import type { AppState, RequestContext } from '../state.js';
import { isUuid, parseQuery } from '../validation.js';
import { presentProjectDeletion } from './data-rights.presenter.js';
import { DeleteProjectQuery } from './deletion.schema.js';

function uuidParam(ctx: RequestContext, name: string, what: string): string {
  const id = ctx.params[name] ?? '';
  if (!isUuid(id)) throw notFound(`${what} not found`);
  return id;
}

/**
 * Owners delete what they own (issue 16): a feedback item with its votes and comments, one comment
 * (moderation), or a whole project with all its data in PostgreSQL and ClickHouse.
 */
export function deletionRouter({ sql, projectKeys }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.delete('/projects/:id/feedbacks/:feedbackId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const result = await deleteFeedback(sql, project.id, uuidParam(ctx, 'feedbackId', 'feedback'));
    if (!result) throw notFound('feedback not found');
    ctx.body = presentFeedback(result.feedback);
  });

  router.delete('/projects/:id/feedbacks/:feedbackId/comments/:commentId', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const feedbackId = uuidParam(ctx, 'feedbackId', 'feedback');
    const comment = await deleteComment(sql, project.id, feedbackId, uuidParam(ctx, 'commentId', 'comment'));
    if (!comment) throw notFound('comment not found');
    ctx.body = presentComment(comment);
  });

  router.delete('/projects/:id', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '', { allowSuspended: true });
    if (ctx.state.memberId) throw forbidden("a project is deleted with the account owner's admin token");
    const { confirm } = parseQuery(DeleteProjectQuery, ctx.query);
    if (confirm !== project.name) throw badRequest('confirm: must be the project’s name, exactly');
    const deletion = await deleteProject(sql, project);
    if (!deletion) throw notFound('project not found');
    // Its API key stops here at once; other processes hear of it through NOTIFY (trigger of 006).
    projectKeys.forgetProject(project.id);
    ctx.status = 202;
    ctx.set('Location', `/api/v1/projects/deletions/${deletion.id}`);
    ctx.body = presentProjectDeletion(deletion);
  });

  router.get('/projects/deletions/:deletionId', auth, async (ctx) => {
    const account = ctx.state.account;
    if (!account) throw unauthorized('missing admin bearer token');
    const deletion = await findProjectDeletion(sql, account.id, uuidParam(ctx, 'deletionId', 'project deletion'));
    if (!deletion) throw notFound('project deletion not found');
    ctx.body = presentProjectDeletion(deletion);
  });

  return router;
}
