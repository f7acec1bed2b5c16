import { z } from 'zod';
import { findErasure, requestErasure } from '../../oltp/erasures.repo.js';
import { API_PREFIX } from '../api-prefix.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { describe, error, json, projectId } from '../shared/building-blocks.js';
import { presentErasure } from '../shared/data-rights.presenter.js';
import { dataRightsErrors, ErasureResponse } from '../shared/data-rights.responses.js';
import { pathValue, userIdSchema } from '../validation.js';

const erasureLocation = {
  Location: { description: 'The erasure’s URL (GET it to follow the job).', schema: { type: 'string' as const } },
};

/**
 * Erasure of an SDK user's data (GDPR Art. 17, docs/data-rights.md): the request records a
 * durable job and answers 202 with it; the data-rights worker carries it out step by step.
 */
export const erasureRoutes = [
  defineRoute({
    method: 'delete',
    path: '/projects/:id/users/:userId',
    auth: 'projectAdmin',
    projectRules: { allowSuspended: true },
    operationId: 'eraseSdkUser',
    tags: ['Data rights'],
    summary: 'Erase an SDK user’s data (GDPR Art. 17)',
    description:
      'Records a durable erasure job and answers at once. The job deletes the SDK user and their votes (vote counts and `total_mrr` follow), deletes the emails sent to them as voter ' +
      'or submitter and their address from notification snapshots, anonymizes their feedback items and comments (kept on the board, attributed to a random id), then deletes their events ' +
      'and facts in ClickHouse and rebuilds the rollups of the days that held their events. It survives restarts and is safe to run twice. Asking again while one is open answers the open one. ' +
      'Also allowed for a suspended project.',
    params: z.object({
      id: projectId,
      userId: pathValue(
        describe(
          userIdSchema,
          'The client app’s user id (URL-encoded). A user unknown to PostgreSQL may still have events: the job runs anyway.',
        ),
      ),
    }),
    responses: {
      202: { ...json('The erasure job.', ErasureResponse), headers: erasureLocation },
      400: error('A user id longer than 255 characters.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      // A suspended project can still be asked to erase: the law does not wait for a reinstatement.
      const { erasure } = await requestErasure(sql, project.id, params.userId);
      ctx.status = 202;
      ctx.set('Location', `${API_PREFIX}/projects/${project.id}/erasures/${erasure.id}`);
      ctx.body = presentErasure(erasure);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/erasures/:erasureId',
    auth: 'projectAdmin',
    projectRules: { allowSuspended: true },
    operationId: 'getErasure',
    tags: ['Data rights'],
    summary: 'Follow an erasure',
    params: z.object({
      id: projectId,
      erasureId: describe(z.uuid({ error: 'erasure not found' }), 'Erasure id. A malformed id is a 404, like a missing one.'),
    }),
    responses: {
      200: json('The erasure job.', ErasureResponse),
      404: error('No such project, or no such erasure in it.'),
      default: dataRightsErrors.default,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const erasure = await findErasure(sql, project.id, params.erasureId);
      if (!erasure) throw notFound('erasure not found');
      ctx.body = presentErasure(erasure);
    },
  }),
];
