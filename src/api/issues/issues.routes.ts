import { z } from 'zod';
import { isTrackerKind } from '../../core/trackers.js';
import { findFeedback } from '../../oltp/feedback.repo.js';
import { deleteLink, insertLink, listLinks, trackerForCall } from '../../oltp/trackers.repo.js';
import { defineRoute } from '../define-route.js';
import { badRequest, conflict, forbidden, notFound } from '../errors.js';
import { body, defaultError, error, json, withFieldDocs } from '../shared/building-blocks.js';
import { assertCallable, trackerCallResponses } from '../shared/tracker-calls.js';
import { createIssueFor, existingIssue } from './issue-making.js';
import { presentLinkedIssue } from './issues.presenter.js';
import { LinkedIssueResponse } from './issues.responses.js';
import { FeedbackIssuePath, FeedbackIssuesPath, LinkIssueBody } from './issues.schema.js';

/*
 * An item's issues in the project's trackers (docs/integrations.md): create one from the item,
 * link an existing one, list them, unlink. Creating and linking call the tracker within the
 * request (the answer carries the issue); what follows, the status and votes going out and the
 * tracker's changes coming in, happens in the background.
 */

const INTEGRATIONS_PLAN = { plan: { feature: 'integrations', reason: 'integrations require the Pro or Team plan' } } as const;

const notFoundItem = error('No such project, or no such feedback in it.');

export const issueRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId/issues',
    auth: 'projectAdmin',
    operationId: 'listFeedbackIssues',
    tags: ['Integrations'],
    summary: 'An item’s linked issues (GitHub, Linear)',
    description:
      'Oldest link first, each with the issue’s key, address and state as last seen or set. Answers on every plan, as the integration list does.',
    params: FeedbackIssuesPath,
    responses: {
      200: json('The linked issues.', z.array(LinkedIssueResponse)),
      404: notFoundItem,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const feedback = await findFeedback(sql, project.id, params.feedbackId, undefined);
      if (!feedback) throw notFound('feedback not found');
      ctx.body = (await listLinks(sql, project.id, feedback.id)).map(presentLinkedIssue);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/feedbacks/:feedbackId/issues',
    auth: 'projectAdmin',
    projectRules: INTEGRATIONS_PLAN,
    operationId: 'createFeedbackIssue',
    tags: ['Integrations'],
    summary: 'Create the item’s issue in GitHub or Linear, or link an existing one',
    description:
      'Pro and Team plans. Without `issue`: creates the issue in the integration’s repository or team, its description the item’s text, its votes and voters’ MRR and a link to the item, in the state the status map gives the item’s status. ' +
      'With `issue`: links that existing issue as it is (GitHub `#123`, `123` or its URL; Linear `ENG-42`, its URL or its id). ' +
      'One issue per item and integration, one item per issue (409). From then on the issue follows the item’s status, and the tracker’s changes of its state come back through the webhook.',
    params: FeedbackIssuesPath,
    body: body(
      withFieldDocs(LinkIssueBody, {
        integrationId: 'A `github` or `linear` integration of this project.',
        issue: 'An existing issue to link instead of creating one.',
      }),
      'CreateFeedbackIssueRequest',
    ),
    responses: {
      200: json('The linked issue.', LinkedIssueResponse),
      400: error(
        'Validation failed; `integrationId` is not a tracker of this project; `issue` names no issue of the tracker (or one in another repository); the tracker refused the request or the repository or team is not there.',
      ),
      402: error('The account’s plan is Free (integrations need Pro or Team).'),
      403: error('The project belongs to another account, or is suspended or archived.'),
      404: notFoundItem,
      409: error(
        'The item already has an issue of this integration, or the issue is linked to another item; the item is merged; the integration is disabled or needs attention (the tracker refused its token, now or before).',
      ),
      ...trackerCallResponses,
      default: defaultError,
    },
    handler: async (ctx, deps, { project, params, body }) => {
      const { sql } = deps;
      if (project.archived) throw forbidden('project is archived');
      const feedback = await findFeedback(sql, project.id, params.feedbackId, undefined);
      if (!feedback) throw notFound('feedback not found');
      if (feedback.merged_into_id)
        throw conflict(`feedback is merged into ${feedback.merged_into_id}: link the issue to that item instead`);
      const tracker = await trackerForCall(sql, project.id, body.integrationId);
      if (!tracker || !isTrackerKind(tracker.kind)) throw badRequest('integrationId: not a github or linear integration of this project');
      assertCallable(tracker);
      const linked = (await listLinks(sql, project.id, feedback.id)).find((link) => link.integration_id === tracker.id);
      if (linked) throw conflict(`the item already has ${linked.issue_key} in this integration: unlink it first`);
      const fields =
        body.issue === undefined ? await createIssueFor(deps, tracker, feedback) : await existingIssue(deps, tracker, body.issue);
      const result = await insertLink(sql, { ...fields, projectId: project.id, feedbackId: feedback.id, integrationId: tracker.id });
      if (result.kind === 'taken') {
        throw conflict(
          result.by === 'issue'
            ? `${fields.issueKey} is linked to another item (${result.feedbackId})`
            : 'the item already has an issue of this integration',
        );
      }
      ctx.body = presentLinkedIssue(result.link);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/feedbacks/:feedbackId/issues/:linkId',
    auth: 'projectAdmin',
    operationId: 'unlinkFeedbackIssue',
    tags: ['Integrations'],
    summary: 'Unlink an issue from the item',
    description: 'The issue itself is left as it is in the tracker; the two no longer follow each other. Allowed on every plan.',
    params: FeedbackIssuePath,
    responses: {
      200: json('The removed link.', LinkedIssueResponse),
      404: error('No such project, feedback in it, or link of that item.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const removed = await deleteLink(sql, project.id, params.feedbackId, params.linkId);
      if (!removed) throw notFound('link not found');
      ctx.body = presentLinkedIssue(removed);
    },
  }),
];
