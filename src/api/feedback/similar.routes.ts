import { z } from 'zod';
import { findFeedback } from '../../oltp/feedback.repo.js';
import { findSimilarFeedback } from '../../oltp/similar-feedback.repo.js';
import { keyProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { viewerOf } from '../shared/acting-user.js';
import { defaultError, describe, error, feedbackId, json, projectId } from '../shared/building-blocks.js';
import { presentSimilar, SimilarFeedbackResponse, SimilarFeedbacksQuery } from './similar.schema.js';

/** The widget's and the board's list under the title field: a handful, the best first. */
const SUGGESTIONS = 5;

const ViewerHeader = z.object({
  'X-User-Id': describe(z.string().optional(), 'The current user: their own held anonymous submissions are matched too.'),
});

/**
 * Similar requests (docs/api-guide.md "Similar requests"): shown while a user types a new
 * request, and to owners as likely duplicates. Before feedback.routes.ts's `/feedbacks/:id`, so
 * that `similar` is this route and never an item id.
 */
export const similarFeedbackRoutes = [
  defineRoute({
    method: 'get',
    path: '/feedbacks/similar',
    auth: 'clientKey',
    cors: true,
    operationId: 'findSimilarFeedbacks',
    tags: ['Feedback'],
    summary: 'Find items that resemble a text',
    description:
      'Up to 5 items of the project that resemble `q`, best first: its words against the title (weighted most) and the description, stemmed (English), and misspelt or half-typed words against the title (trigrams). Merged items, rejected ones and held anonymous submissions (but the caller’s own) are left out. `q` shorter than 3 characters answers an empty list. Rate-limited like the other API-key routes.',
    query: SimilarFeedbacksQuery,
    headers: ViewerHeader,
    responses: {
      200: json('The matches, best first; empty when nothing resembles `q`.', z.array(SimilarFeedbackResponse)),
      400: error('`q` is missing or longer than 500 characters, or given twice; `X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { query }) => {
      const rows = await findSimilarFeedback(sql, keyProject(ctx).id, query.q, { viewer: viewerOf(ctx), limit: SUGGESTIONS });
      ctx.body = rows.map(presentSimilar);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId/similar',
    auth: 'projectAdmin',
    operationId: 'listLikelyDuplicates',
    tags: ['Projects'],
    summary: 'List an item’s likely duplicates',
    description:
      'Up to 5 other items that resemble this one’s title, best first, found and scored as GET /feedbacks/similar finds and scores them (the title is matched against their titles and descriptions). Held anonymous submissions are included (the owner sees them); merged and rejected items are not. Merge one into the other with POST /projects/{id}/feedbacks/{feedbackId}/merge; the inbox offers the older item as the target.',
    params: z.object({ id: projectId, feedbackId }),
    responses: {
      200: json('The likely duplicates, best first.', z.array(SimilarFeedbackResponse)),
      404: error('No such project, or no such feedback in it.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const item = await findFeedback(sql, project.id, params.feedbackId, undefined);
      if (!item) throw notFound('feedback not found');
      // The title, as a user types it into the widget: what the quality figures measure.
      const rows = await findSimilarFeedback(sql, project.id, item.title, {
        includeHeld: true,
        excludeId: item.id,
        limit: SUGGESTIONS,
      });
      ctx.body = rows.map(presentSimilar);
    },
  }),
];
