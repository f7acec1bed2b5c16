import { z } from 'zod';
import { ADMIN_TOKEN, PUBLIC, ProjectPath, defaultError, error, feedbackId, json, type Route } from '../openapi/building-blocks.js';
import { FeedbackResponse } from '../feedback/feedback.responses.js';
import { ProjectResponse } from '../projects/projects.responses.js';

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

const owner = { 401: error('Missing or invalid admin token.'), 403: error('The project belongs to another account, or is suspended.') };

/** Keys and identity for web pages, moderation, public boards (docs/widget.md). */
export function registerIdentityPaths(route: Route) {
  route({
    method: 'post',
    path: '/projects/{id}/identity-secret',
    operationId: 'createIdentitySecret',
    tags: ['Identity'],
    summary: 'Create or rotate the identity secret',
    description:
      'The host app’s server signs user tokens (JWT, HS256; `sub` = userId, optional `email` and `mrr`, `exp` required and at most 30 days ahead) with this secret; they travel as `X-User-Token`. Admin token, or a member token on Team.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project with its new identity secret (shown only here).', ProjectWithIdentitySecret),
      ...owner,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/publishable-key',
    operationId: 'rotatePublishableKey',
    tags: ['Identity'],
    summary: 'Rotate the publishable key',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project with its new publishable key; the old one stops at once.', ProjectResponse),
      ...owner,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/moderation',
    operationId: 'listAwaitingApproval',
    tags: ['Identity'],
    summary: 'Anonymous submissions awaiting approval',
    description: 'Items submitted anonymously on the public board; nobody else sees them until approved. Newest first.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The items awaiting approval.', z.array(FeedbackResponse)),
      ...owner,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/feedbacks/{feedbackId}/approve',
    operationId: 'approveFeedback',
    tags: ['Identity'],
    summary: 'Approve an anonymous submission',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath.extend({ feedbackId }) },
    responses: {
      200: json('The item, now visible on the board and in the app.', FeedbackResponse),
      ...owner,
      404: error('No such project or item.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/boards/{slug}',
    operationId: 'getPublicBoard',
    tags: ['Identity'],
    summary: 'A public board',
    description: 'Answers only while the project’s `board_public` is on.',
    security: PUBLIC,
    request: { params: z.object({ slug: z.string() }) },
    responses: {
      200: json('The board.', BoardResponse),
      404: error('No such public board.'),
      default: defaultError,
    },
  });
}
