import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { IDENTITY_SECRET_PREFIX, newSecret, PUBLISHABLE_KEY_PREFIX } from '../../core/secrets.js';
import { approveFeedback, listFeedbacks } from '../../oltp/feedback.repo.js';
import { findPublicBoard, type Project, replaceIdentitySecret, replacePublishableKey } from '../../oltp/projects.repo.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { defaultError, error, feedbackId, json, ProjectPath } from '../shared/building-blocks.js';
import { presentFeedback } from '../shared/feedback.presenter.js';
import { FeedbackResponse } from '../shared/feedback.responses.js';
import { presentProject } from '../shared/projects.presenter.js';
import { ProjectResponse } from '../shared/projects.responses.js';

/** A board's address is a slug the migration made (lowercase letters, digits and dashes). */
const SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

const ProjectWithIdentitySecret = ProjectResponse.extend({
  identity_secret: z.string().meta({
    description: 'The HS256 secret your server signs `X-User-Token` JWTs with. Shown only here; creating a new one stops the old.',
  }),
}).meta({ id: 'ProjectWithIdentitySecret' });

const BoardResponse = z
  .object({
    name: z.string(),
    slug: z.string(),
    publishable_key: z.string().meta({ description: 'The key the board page uses (public by design).' }),
    anonymous_feedback: z.boolean(),
    require_signed_identity: z.boolean(),
  })
  .meta({ id: 'Board', description: 'What a public board page needs to start.' });

/**
 * Keys and identity for web pages (docs/widget.md): the identity secret a host app signs user
 * tokens with, the publishable key, the moderation queue of anonymous submissions, and the
 * public description of a board that its page reads.
 */
export const identityRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/identity-secret',
    auth: 'projectAdmin',
    operationId: 'createIdentitySecret',
    tags: ['Identity'],
    summary: 'Create or rotate the identity secret',
    description:
      'The host app’s server signs user tokens (JWT, HS256; `sub` = userId, optional `email` and `mrr`, `exp` required and at most 30 days ahead) with this secret; they travel as `X-User-Token`. Admin token, or a member token on Team.',
    params: ProjectPath,
    responses: {
      200: json('The project with its new identity secret (shown only here).', ProjectWithIdentitySecret),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { project }) => {
      const secret = newSecret(IDENTITY_SECRET_PREFIX);
      const updated = (await replaceIdentitySecret(sql, project.id, secret)) as Project;
      // Tokens signed with the previous secret stop verifying here at once; elsewhere through NOTIFY.
      projectKeys.forgetProject(project.id);
      ctx.body = { ...presentProject(updated), identity_secret: secret };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/publishable-key',
    auth: 'projectAdmin',
    operationId: 'rotatePublishableKey',
    tags: ['Identity'],
    summary: 'Rotate the publishable key',
    params: ProjectPath,
    responses: {
      200: json('The project with its new publishable key; the old one stops at once.', ProjectResponse),
      default: defaultError,
    },
    handler: async (ctx, { sql, projectKeys }, { project }) => {
      const key = PUBLISHABLE_KEY_PREFIX + randomBytes(16).toString('hex');
      const updated = (await replacePublishableKey(sql, project.id, key)) as Project;
      projectKeys.forgetProject(project.id);
      ctx.body = presentProject(updated);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/moderation',
    auth: 'projectAdmin',
    operationId: 'listAwaitingApproval',
    tags: ['Identity'],
    summary: 'Anonymous submissions awaiting approval',
    description: 'Items submitted anonymously on the public board; nobody else sees them until approved. Newest first.',
    params: ProjectPath,
    responses: {
      200: json('The items awaiting approval.', z.array(FeedbackResponse)),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project }) => {
      const filters = { includeMerged: false, sort: 'newest', approval: 'awaiting' } as const;
      ctx.body = (await listFeedbacks(sql, project.id, filters, undefined)).map(presentFeedback);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/feedbacks/:feedbackId/approve',
    auth: 'projectAdmin',
    operationId: 'approveFeedback',
    tags: ['Identity'],
    summary: 'Approve an anonymous submission',
    params: ProjectPath.extend({ feedbackId }),
    responses: {
      200: json('The item, now visible on the board and in the app.', FeedbackResponse),
      404: error('No such project or item.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const row = await approveFeedback(sql, project.id, params.feedbackId);
      if (!row) throw notFound('feedback not found');
      ctx.body = presentFeedback(row);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/boards/:slug',
    auth: 'public',
    operationId: 'getPublicBoard',
    tags: ['Identity'],
    summary: 'A public board',
    description: 'Answers only while the project’s `board_public` is on.',
    params: z.object({ slug: z.string() }),
    responses: {
      200: json('The board.', BoardResponse),
      404: error('No such public board.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params: { slug } }) => {
      const project = SLUG.test(slug) ? await findPublicBoard(sql, slug) : null;
      if (!project) throw notFound('board not found');
      ctx.body = {
        name: project.name,
        slug: project.slug,
        publishable_key: project.publishable_key,
        anonymous_feedback: project.anonymous_feedback,
        require_signed_identity: project.require_signed_identity,
      };
    },
  }),
];
