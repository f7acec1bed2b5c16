import { z } from 'zod';
import { renderDigest, weekStartOf } from '../../core/digest.js';
import { digestSetting, setDigestSetting } from '../../oltp/digest.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { defineRoute } from '../define-route.js';
import { forbidden } from '../errors.js';
import { body, defaultError, error, json, ProjectPath } from '../shared/building-blocks.js';
import type { RequestContext } from '../state.js';
import { bodySchema } from '../validation.js';
import { digestSoFar } from './digest.content.js';
import { DigestPreviewResponse, DigestSettingResponse } from './digest.responses.js';

const NOT_YOUR_PROJECT = "a team member's digest setting is on the project it is a member of";

const DigestSettingBody = bodySchema({ enabled: z.boolean({ error: 'must be a boolean' }) });

/** The caller's own setting: the owner's (owner token), or the member's own on its project. */
async function ownSetting(ctx: RequestContext, sql: Parameters<typeof digestSetting>[0], project: ProjectWithPlan) {
  const memberId = ctx.state.memberId ?? null;
  const setting = await digestSetting(sql, project.id, memberId);
  if (!setting) throw forbidden(NOT_YOUR_PROJECT);
  return { memberId, setting };
}

const memberElsewhere = error(
  'The project belongs to another account, or is suspended; or a team member’s token on a project it is not a member of.',
);

/**
 * The weekly digest (docs/notifications.md "The weekly digest"): each recipient's own setting (the
 * owner's token sets the owner's, a member's its own), and the preview of the week so far.
 */
export const digestRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/digest/settings',
    auth: 'projectAdmin',
    operationId: 'getDigestSetting',
    tags: ['Alerts'],
    summary: 'Whether the caller gets the project’s weekly digest',
    description:
      'The owner’s setting with the owner’s token (on by default), a member’s own with its token (off by default; the digest reaches members on Team).',
    params: ProjectPath,
    responses: { 200: json('The caller’s setting.', DigestSettingResponse), 403: memberElsewhere, default: defaultError },
    handler: async (ctx, { sql }, { project }) => {
      ctx.body = (await ownSetting(ctx, sql, project)).setting;
    },
  }),
  defineRoute({
    method: 'put',
    path: '/projects/:id/digest/settings',
    auth: 'projectAdmin',
    operationId: 'setDigestSetting',
    tags: ['Alerts'],
    summary: 'Turn the weekly digest on or off for the caller',
    description: 'For the token’s own recipient only: the owner, or the member. The email’s unsubscribe link turns it off too.',
    params: ProjectPath,
    body: body(DigestSettingBody, 'DigestSettingRequest'),
    responses: {
      200: json('The caller’s setting.', DigestSettingResponse),
      400: error('Validation failed; the reason names the field.'),
      403: memberElsewhere,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, body }) => {
      const { memberId } = await ownSetting(ctx, sql, project);
      await setDigestSetting(sql, project.id, memberId, body.enabled);
      ctx.body = (await ownSetting(ctx, sql, project)).setting;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/digest/preview',
    auth: 'projectAdmin',
    operationId: 'previewDigest',
    tags: ['Alerts'],
    summary: 'The weekly digest of the week so far',
    description:
      'What Monday’s email would say if the week ended now: from Monday 00:00 UTC until now, with the same figures and the same rendering (HTML and plain text) as the email.',
    params: ProjectPath,
    responses: { 200: json('The digest so far.', DigestPreviewResponse), default: defaultError },
    handler: async (ctx, { sql, clickhouse, config }, { project }) => {
      const now = new Date();
      const content = await digestSoFar(sql, clickhouse, project, weekStartOf(now), now);
      ctx.body = { ...content, ...renderDigest(content, { publicUrl: config.delivery.publicUrl }) };
    },
  }),
];
