import { z } from 'zod';
import { describe, feedbackId, projectId } from '../shared/building-blocks.js';
import { bodySchema } from '../validation.js';

/** /projects/:id/feedbacks/:feedbackId/issues. */
export const FeedbackIssuesPath = z.object({ id: projectId, feedbackId });

/** One linked issue of an item. */
export const FeedbackIssuePath = z.object({
  id: projectId,
  feedbackId,
  linkId: describe(
    z.uuid({ error: 'link not found' }),
    'The link’s id (`id` of the linked issue). 404 when it is not a link of this item.',
  ),
});

/** POST /projects/:id/feedbacks/:feedbackId/issues: create the issue, or link an existing one. */
export const LinkIssueBody = bodySchema({
  integrationId: z.uuid({ error: 'must be the id of a github or linear integration of this project' }),
  issue: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(2048, 'must be at most 2048 characters').optional(),
});
export type LinkIssueBody = z.infer<typeof LinkIssueBody>;
