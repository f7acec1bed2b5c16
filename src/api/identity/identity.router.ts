import { randomBytes } from 'node:crypto';
import { Router } from '@koa/router';
import { approveFeedback, listFeedbacks } from '../../oltp/feedback.repo.js';
import { findPublicBoard, replaceIdentitySecret, replacePublishableKey, type Project } from '../../oltp/projects.repo.js';
import { IDENTITY_SECRET_PREFIX, newSecret, PUBLISHABLE_KEY_PREFIX } from '../../core/secrets.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { notFound } from '../errors.js';
import { presentFeedback } from '../feedback/feedback.presenter.js';
import { presentProject } from '../projects/projects.presenter.js';
import type { AppState, RequestContext } from '../state.js';
import { isUuid } from '../validation.js';

/** A board's address is a slug the migration made (lowercase letters, digits and dashes). */
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

function feedbackIdParam(ctx: RequestContext): string {
  const id = ctx.params.feedbackId ?? '';
  if (!isUuid(id)) throw notFound('feedback not found');
  return id;
}

/**
 * Keys and identity for web pages (docs/widget.md): the identity secret a host app signs user
 * tokens with, the publishable key, the moderation queue of anonymous submissions, and the
 * public description of a board that its page reads.
 */
export function identityRouter({ sql, projectKeys }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.post('/projects/:id/identity-secret', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const secret = newSecret(IDENTITY_SECRET_PREFIX);
    const updated = (await replaceIdentitySecret(sql, project.id, secret)) as Project;
    // Tokens signed with the previous secret stop verifying here at once; elsewhere through NOTIFY.
    projectKeys.forgetProject(project.id);
    ctx.body = { ...presentProject(updated), identity_secret: secret };
  });

  router.post('/projects/:id/publishable-key', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const key = PUBLISHABLE_KEY_PREFIX + randomBytes(16).toString('hex');
    const updated = (await replacePublishableKey(sql, project.id, key)) as Project;
    projectKeys.forgetProject(project.id);
    ctx.body = presentProject(updated);
  });

  router.get('/projects/:id/moderation', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const rows = await listFeedbacks(sql, project.id, { includeMerged: false, sort: 'newest', approval: 'awaiting' }, undefined);
    ctx.body = rows.map(presentFeedback);
  });

  router.post('/projects/:id/feedbacks/:feedbackId/approve', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const row = await approveFeedback(sql, project.id, feedbackIdParam(ctx));
    if (!row) throw notFound('feedback not found');
    ctx.body = presentFeedback(row);
  });

  router.get('/boards/:slug', async (ctx) => {
    const slug = ctx.params.slug ?? '';
    const project = SLUG.test(slug) ? await findPublicBoard(sql, slug) : null;
    if (!project) throw notFound('board not found');
    ctx.body = {
      name: project.name,
      slug: project.slug,
      publishable_key: project.publishable_key,
      anonymous_feedback: project.anonymous_feedback,
      require_signed_identity: project.require_signed_identity,
    };
  });

  return router;
}
