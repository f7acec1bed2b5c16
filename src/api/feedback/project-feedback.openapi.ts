import { z } from 'zod';
import {
  ADMIN_TOKEN,
  body,
  defaultError,
  describe,
  error,
  feedbackId,
  json,
  ProjectPath,
  projectId,
  type Route,
  withFieldDocs,
} from '../openapi/building-blocks.js';
import { FeedbackListQuery } from './feedback.openapi.js';
import { CommentResponse, FeedbackResponse, StatusCountsResponse, VotersResponse } from './feedback.responses.js';
import { FeedbackCountsQuery, MergeFeedbackBody, OwnerReplyBody, ProjectFeedbacksQuery, UpdateFeedbackBody } from './feedback.schema.js';

const ProjectFeedbackPath = z.object({ id: projectId, feedbackId });

const TITLE_SEARCH =
  'Only items whose title contains this text, in any letter case. `%` and `_` are matched as themselves, not as wildcards. At most 200 characters; empty is no search.';

/** The owner's list: GET /feedbacks's parameters, a title search and the sort by voters' MRR. */
const ProjectFeedbackListQuery = FeedbackListQuery.extend({
  q: describe(ProjectFeedbacksQuery.shape.q, TITLE_SEARCH),
  sort: describe(
    ProjectFeedbacksQuery.shape.sort,
    '`votes` (vote count descending, the default), `newest`, `oldest`, `comments` (comment count descending), `mrr` (voters’ total MRR descending, items without one last, then votes). Ties by creation time, then id.',
  ),
});

const CountsQuery = FeedbackCountsQuery.extend({
  category: describe(FeedbackCountsQuery.shape.category, 'Only items of this category.'),
  includeMerged: describe(
    FeedbackCountsQuery.shape.includeMerged,
    'Count items merged into others too (`true`/`false`, also `1`/`0`). Default false, as the list.',
  ),
  q: describe(FeedbackCountsQuery.shape.q, TITLE_SEARCH),
});

const notFoundItem = error('No such project, or no such feedback in it (an item of another project included).');

const requestBodies = () => ({
  updateFeedbackStatus: body(
    withFieldDocs(UpdateFeedbackBody, {
      rejectionReason: 'Accepted only when the resulting status is `rejected`; cleared when an item leaves `rejected`.',
    }),
    'UpdateFeedbackStatusRequest',
    'At least one of `status` and `rejectionReason`.',
  ),
  mergeFeedback: body(withFieldDocs(MergeFeedbackBody, { intoId: 'The target item, in the same project.' }), 'MergeFeedbackRequest'),
  ownerReply: body(OwnerReplyBody, 'OwnerReplyRequest', 'The author is the token’s account, or its team member.'),
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
    description:
      'The query parameters of GET /feedbacks, plus `q` (title search) and `sort=mrr`; `has_voted` is always false here. Counts per status: GET /projects/{id}/feedbacks/counts.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: ProjectFeedbackListQuery },
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
    method: 'get',
    path: '/projects/{id}/feedbacks/counts',
    operationId: 'countProjectFeedbacks',
    tags: ['Projects'],
    summary: 'Count a project’s feedback per status',
    description:
      'Under the list’s filters other than `status` (category, merged items, title search), so the counts match the list beside them.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: CountsQuery },
    responses: {
      200: json('Items per status.', StatusCountsResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/feedbacks/{feedbackId}',
    operationId: 'getProjectFeedback',
    tags: ['Projects'],
    summary: 'Get one feedback item',
    description: 'Merged items included; `has_voted` is always false here.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath },
    responses: {
      200: json('The item.', FeedbackResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: notFoundItem,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/feedbacks/{feedbackId}/votes',
    operationId: 'listFeedbackVoters',
    tags: ['Projects'],
    summary: 'List a feedback item’s voters with their MRR',
    description:
      'Every voter with the email they gave (they are the owner’s users) and their current MRR from POST /users/register, and the total the item’s `total_mrr` answers.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath },
    responses: {
      200: json('The voters.', VotersResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: notFoundItem,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/feedbacks/{feedbackId}/comments',
    operationId: 'listProjectFeedbackComments',
    tags: ['Projects'],
    summary: 'List a feedback item’s comments',
    description: 'The comments GET /feedbacks/{id}/comments answers, oldest first, read with the admin token.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath },
    responses: {
      200: json('The comments.', z.array(CommentResponse)),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: notFoundItem,
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/feedbacks/{feedbackId}/comments',
    operationId: 'replyToFeedback',
    tags: ['Projects'],
    summary: 'Reply to a feedback item as the project’s team',
    description:
      'A comment with `is_admin` true, recorded as written by the token’s account or team member: its `user_id` is `account:<account id>` or `member:<member id>`, never a user of the client app.',
    security: ADMIN_TOKEN,
    request: { params: ProjectFeedbackPath, body: requests.ownerReply },
    responses: {
      200: json('The comment.', CommentResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended or archived.'),
      404: notFoundItem,
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
      'The source gets `merged_into_id` and `merged_at` and leaves default lists; the target lists it in `merged_feedback_ids`; votes move to the target (a user who voted on both keeps one). Comments move to the target as the origin’s merge carried them, each prefixed `[Originally on: <source title>] ` (kept: id, author, `created_at`; a comment already carrying a prefix keeps it; one that would pass 2,000 characters is cut, ending in `…`). Items merged earlier into the source now point at the target.',
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
