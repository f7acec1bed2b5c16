import { z } from 'zod';
import { PLAN_LIMITS } from '../../core/plans.js';
import { API_KEY, body, defaultError, describe, error, feedbackId, json, type Route, withFieldDocs } from '../openapi/building-blocks.js';
import { CommentResponse, FeedbackResponse, VoteResponse } from './feedback.responses.js';
import { AddCommentBody, AddVoteBody, CreateFeedbackBody, ListFeedbacksQuery, RemoveVoteBody } from './feedback.schema.js';

const FeedbackPath = z.object({ id: feedbackId });

const ViewerHeader = z.object({
  'X-User-Id': describe(
    z.string().optional(),
    'The current user of the client app. It makes `has_voted` personal; without it `has_voted` is false. Sent more than once, equal values count as one; differing values are a 400.',
  ),
});

/**
 * GET /feedbacks query: the schema that validates it, with descriptions added. Query parameters
 * are strings on the wire, so the default of `includeMerged` (a boolean after its transform) is
 * shown as sent (normalizeParameter).
 */
const { shape } = ListFeedbacksQuery;
export const FeedbackListQuery = ListFeedbacksQuery.extend({
  status: describe(shape.status, 'Only items in this status.'),
  category: describe(shape.category, 'Only items of this category.'),
  includeMerged: describe(
    shape.includeMerged,
    'Include items merged into others (`true`/`false`, also `1`/`0`). Default false: merged items are left out. Also read as `include_merged` (see the casing of query parameters in the API description).',
  ),
  sort: describe(
    shape.sort,
    '`votes` (vote count descending, the default), `newest`, `oldest`, `comments` (comment count descending). Ties by creation time, then id.',
  ),
  limit: describe(shape.limit, 'Page size, 1 to 1000. Without `limit` and `offset` every item is returned.'),
  offset: describe(shape.offset, 'Items to skip.'),
});

/**
 * The request bodies of these routes: the schemas that validate them, with descriptions of the
 * fields whose constraints do not say it all, named as components.
 */
const requestBodies = () => ({
  createFeedback: body(
    withFieldDocs(CreateFeedbackBody, {
      userId: 'The submitter (the client app’s user id); gets the first vote.',
      userEmail: 'Email of the submitter, for status update notifications. null is the same as absent.',
    }),
    'CreateFeedbackRequest',
  ),
  addVote: body(
    withFieldDocs(AddVoteBody, {
      email: 'For status change notifications. null is the same as absent.',
      notifyStatusChange: 'Opt in to emails on status changes (voter notifications need the Team plan).',
    }),
    'AddVoteRequest',
  ),
  removeVote: body(RemoveVoteBody, 'RemoveVoteRequest', 'A JSON body sent with DELETE.'),
  addComment: body(withFieldDocs(AddCommentBody, { isAdmin: 'Marks a comment by the app’s team.' }), 'AddCommentRequest'),
});

/** Feedback, votes and comments with the API key (SPEC 4.1 to 4.7). */
export function registerFeedbackPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'get',
    path: '/feedbacks',
    operationId: 'listFeedbacks',
    tags: ['Feedback'],
    summary: 'List feedback',
    security: API_KEY,
    request: { query: FeedbackListQuery, headers: ViewerHeader },
    responses: {
      200: json('The project’s feedback items.', z.array(FeedbackResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice; `X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/feedbacks',
    operationId: 'createFeedback',
    tags: ['Feedback'],
    summary: 'Create feedback',
    description:
      'The creator gets the first vote, so `vote_count` is 1. `has_voted` is true only when `X-User-Id` names the creator, and false without the header (SPEC 2.1). Project members and integrations are notified.',
    security: API_KEY,
    request: { body: requests.createFeedback, headers: ViewerHeader },
    responses: {
      200: json('The new item.', FeedbackResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      402: error(`The plan’s feedback limit is reached (Free: ${PLAN_LIMITS.free.maxFeedbackPerProject} per project).`),
      403: error('The project is suspended or archived.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/feedbacks/{id}',
    operationId: 'getFeedback',
    tags: ['Feedback'],
    summary: 'Get one feedback item',
    security: API_KEY,
    request: { params: FeedbackPath, headers: ViewerHeader },
    responses: {
      200: json('The item.', FeedbackResponse),
      400: error('`X-User-Id` sent twice with different values.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/feedbacks/{id}/votes',
    operationId: 'addVote',
    tags: ['Votes'],
    summary: 'Add a vote',
    description: 'Each user may vote once per item. Voting is closed on `completed` and `rejected` items and on merged ones.',
    security: API_KEY,
    request: { params: FeedbackPath, body: requests.addVote },
    responses: {
      200: json('The vote state, with `has_voted` true.', VoteResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived, or the item is completed, rejected or merged.'),
      404: error('No such feedback in this project.'),
      409: error('The user has already voted on this item.'),
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/feedbacks/{id}/votes',
    operationId: 'removeVote',
    tags: ['Votes'],
    summary: 'Remove a vote',
    description: 'Idempotent: removing a vote that does not exist answers the current count.',
    security: API_KEY,
    request: { params: FeedbackPath, body: requests.removeVote },
    responses: {
      200: json('The vote state, with `has_voted` false.', VoteResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/feedbacks/{id}/comments',
    operationId: 'listComments',
    tags: ['Comments'],
    summary: 'List comments',
    description: 'Oldest first; equal timestamps keep insertion order.',
    security: API_KEY,
    request: { params: FeedbackPath },
    responses: {
      200: json('The item’s comments.', z.array(CommentResponse)),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/feedbacks/{id}/comments',
    operationId: 'addComment',
    tags: ['Comments'],
    summary: 'Add a comment',
    security: API_KEY,
    request: { params: FeedbackPath, body: requests.addComment },
    responses: {
      200: json('The new comment.', CommentResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended or archived.'),
      404: error('No such feedback in this project.'),
      default: defaultError,
    },
  });
}
