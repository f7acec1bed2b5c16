import { z } from 'zod';
import {
  ADMIN_TOKEN,
  body,
  defaultError,
  error,
  feedbackId,
  json,
  projectId,
  ProjectPath,
  withFieldDocs,
  type Route,
} from '../openapi/building-blocks.js';
import { FeedbackListQuery } from './feedback.openapi.js';
import { MergeFeedbackBody, UpdateFeedbackBody } from './feedback.schema.js';
import { FeedbackResponse } from './feedback.responses.js';

const ProjectFeedbackPath = z.object({ id: projectId, feedbackId });

const requestBodies = () => ({
  updateFeedbackStatus: body(
    withFieldDocs(UpdateFeedbackBody, {
      rejectionReason: 'Accepted only when the resulting status is `rejected`; cleared when an item leaves `rejected`.',
    }),
    'UpdateFeedbackStatusRequest',
    'At least one of `status` and `rejectionReason`.',
  ),
  mergeFeedback: body(withFieldDocs(MergeFeedbackBody, { intoId: 'The target item, in the same project.' }), 'MergeFeedbackRequest'),
});

/** A project's feedback, with the admin token: the list, status changes and merges. */
export function registerProjectFeedbackPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'get',
    path: '/projects/{id}/feedbacks',
    operationId: 'listProjectFeedbacks',
    tags: ['Projects'],
    summary: 'List a project’s feedback',
    description: 'The same query parameters as GET /feedbacks; `has_voted` is always false here.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: FeedbackListQuery },
    responses: {
      200: json('The project’s feedback items.', z.array(FeedbackResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/projects/{id}/feedbacks/{feedbackId}',
    operationId: 'updateFeedbackStatus',
    tags: ['Projects'],
    summary: 'Change a feedback item’s status',
    description:
      'Any of the six statuses may be set. `rejectionReason` is accepted only when the resulting status is `rejected`, and is cleared when an item leaves `rejected`.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath, body: requests.updateFeedbackStatus },
    responses: {
      200: json('The item.', FeedbackResponse),
      400: error('Validation failed, or `rejectionReason` for a status other than `rejected`.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project, or no such feedback in it.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/feedbacks/{feedbackId}/merge',
    operationId: 'mergeFeedback',
    tags: ['Projects'],
    summary: 'Merge a feedback item into another',
    description:
      'The source gets `merged_into_id` and `merged_at` and leaves default lists; the target lists it in `merged_feedback_ids`; votes move to the target (a user who voted on both keeps one). Items merged earlier into the source now point at the target.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath, body: requests.mergeFeedback },
    responses: {
      200: json('The merged source item.', FeedbackResponse),
      400: error('Validation failed; a merge into itself, or into an item not in this project.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project, or no such feedback in it.'),
      409: error('The source is already merged, or the target is itself merged.'),
      default: defaultError,
    },
  });
}
