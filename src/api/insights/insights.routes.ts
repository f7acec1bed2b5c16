import { z } from 'zod';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import {
  createSavedQuery,
  deleteSavedQuery,
  feedbackTitles,
  findImpactLink,
  listSavedQueries,
  saveImpactLink,
  tokenHolderEmail,
} from '../../oltp/insights.repo.js';
import { listVoters } from '../../oltp/votes.repo.js';
import { defineRoute } from '../define-route.js';
import { notFound, unauthorized } from '../errors.js';
import { body, defaultError, describe, error, feedbackId, json, ProjectPath, projectId } from '../shared/building-blocks.js';
import { ErrorBody, MetricsErrorBody } from '../shared/errors.responses.js';
import { impactAnswer, shipDatesAnswer } from './impact.service.js';
import {
  EventNamesResult,
  FunnelResult,
  ImpactResult,
  PathsResult,
  RetentionResult,
  SavedQuery,
  ShipDatesResult,
} from './insights.responses.js';
import {
  EventNamesQuery,
  FunnelBody,
  ImpactLinkBody,
  ImpactQuery,
  PathsBody,
  RetentionBody,
  SavedQueryBody,
  ShipDatesQuery,
} from './insights.schema.js';
import { eventNamesAnswer, funnelAnswer, pathsAnswer, retentionAnswer } from './insights.service.js';
import { liveStream } from './live.stream.js';
import { presentSavedQuery } from './saved-queries.presenter.js';

/**
 * A 400 or 402 of these routes: the metrics error body for what the route itself refuses, and the
 * server-wide body for a body the service cannot read at all (not JSON, unstorable strings), which
 * is refused before any route sees it.
 */
const metricsError = (description: string) =>
  json(
    `${description} A body that is not JSON, or holds a string no store can hold, is a 400 in the server-wide body.`,
    z.union([MetricsErrorBody, ErrorBody]),
  );
const PREDEFINED = PREDEFINED_EVENTS.map((name) => `\`${name}\``).join(', ');
const FeedbackPath = z.object({ id: projectId, feedbackId });
const common = (what: string) => ({
  401: error('Missing or invalid admin token (a member’s token needs the Team plan).'),
  404: error(`No such project${what}.`),
  default: defaultError,
});
const plan400 = metricsError(
  '`METRICS_INVALID_PARAMETER` (a field or parameter, named in the message), `METRICS_INVALID_DATE`, `METRICS_INVALID_RANGE`.',
);
const plan402 = metricsError(`\`METRICS_CUSTOM_EVENTS_REQUIRE_PRO\`: below Pro, the request names an event other than ${PREDEFINED}.`);
const windowNote =
  'The plan’s window clamps the request (a narrowed 200, `retention_clamped`); below Pro only the predefined events are read (`event_scope`).';

/** The item's voters, after checking it is the project's: 404 otherwise. */
async function itemVoters(sql: Parameters<typeof listVoters>[0], projectId: string, id: string) {
  const voters = await listVoters(sql, projectId, id);
  if (!voters) throw notFound('feedback not found');
  return { id, voters: voters.voters };
}

/**
 * Insights on a project's events (issues 24 and 30, docs/insights.md): funnels, retention cohorts, user paths, the
 * names for pickers, feature impact, saved queries and the live view. Admin token of the owning
 * account, or a member's on Team. The plan's rules are the metrics API's: a clamped window is a
 * 200 that says so, and naming a custom event below Pro is a 402.
 */
export const insightsRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/insights/funnel',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'projectFunnel',
    tags: ['Insights'],
    summary: 'Funnel: users who did the steps in order within the conversion window',
    description: `A user counts at step n when they did steps 1..n in order (times non-decreasing) with step n at most conversionWindowSeconds after their step 1; every step inside the window. ${windowNote}`,
    params: ProjectPath,
    body: body(FunnelBody, 'FunnelRequest'),
    responses: { 200: json('The funnel.', FunnelResult), 400: plan400, 402: plan402, ...common('') },
    handler: async (ctx, { clickhouse }, { project, body }) => {
      const input = body;
      ctx.body = await funnelAnswer(clickhouse, { projectId: project.id, plan: project.plan }, input);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/insights/retention',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'projectRetention',
    tags: ['Insights'],
    summary: 'Retention cohorts by day or week',
    description: `A user’s cohort is the day or week of their first cohort event in the window (any event by default); period p counts the cohort’s users with a return event in the p-th interval after it. ${windowNote}`,
    params: ProjectPath,
    body: body(RetentionBody, 'RetentionRequest'),
    responses: { 200: json('The cohorts, one per day or week of the window.', RetentionResult), 400: plan400, 402: plan402, ...common('') },
    handler: async (ctx, { clickhouse }, { project, body }) => {
      const input = body;
      ctx.body = await retentionAnswer(clickhouse, { projectId: project.id, plan: project.plan }, input);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/insights/paths',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'projectPaths',
    tags: ['Insights'],
    summary: 'User paths: what users did after an event, or before one',
    description: `Per user, the names of their events in the window in time order (events of the same millisecond in name order, excludeEvents left out), from their first startEvent on or up to their last endEvent (all of them when neither is given), consecutive repeats collapsed, cut at depth names (with endEvent, the last ones). The answer counts users per move (edges) and per whole path. ${windowNote}`,
    params: ProjectPath,
    body: body(PathsBody, 'PathsRequest'),
    responses: {
      200: json('The paths.', PathsResult),
      400: metricsError(
        '`METRICS_INVALID_PARAMETER` (a field, named in the message; both startEvent and endEvent; excludeEvents holding the start or end event), `METRICS_INVALID_DATE`, `METRICS_INVALID_RANGE`.',
      ),
      402: plan402,
      ...common(''),
    },
    handler: async (ctx, { clickhouse }, { project, body }) => {
      const input = body;
      ctx.body = await pathsAnswer(clickhouse, { projectId: project.id, plan: project.plan }, input);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/event-names',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'projectEventNames',
    tags: ['Insights'],
    summary: 'Event names seen in the window, most tracked first (for pickers)',
    description: `Below Pro only ${PREDEFINED} are listed (\`event_scope: predefined_only\`). ${windowNote}`,
    params: ProjectPath,
    query: EventNamesQuery,
    responses: { 200: json('The names.', EventNamesResult), 400: plan400, ...common('') },
    handler: async (ctx, { clickhouse }, { project, query }) => {
      const limit = query.limit ?? 100;
      ctx.body = await eventNamesAnswer(clickhouse, { projectId: project.id, plan: project.plan }, { ...query, limit });
    },
  }),
  defineRoute({
    method: 'put',
    path: '/projects/:id/feedbacks/:feedbackId/impact',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'linkFeedbackImpact',
    tags: ['Insights'],
    summary: 'Link a feedback item to the events that show its feature in use',
    description: 'Replaces the item’s linked event names. Any name is accepted; reading the impact of a custom one needs Pro.',
    params: FeedbackPath,
    body: body(ImpactLinkBody, 'ImpactLinkRequest'),
    responses: {
      200: json('The link as stored.', z.object({ feedback_id: z.uuid(), event_names: z.array(z.string()) })),
      400: metricsError('`METRICS_INVALID_PARAMETER`: eventNames must be 1 to 20 names of 1 to 100 characters.'),
      ...common(' or feedback item'),
    },
    handler: async (ctx, { sql }, { project, params, body }) => {
      const item = await itemVoters(sql, project.id, params.feedbackId);
      const input = body;
      await saveImpactLink(sql, project.id, item.id, input.eventNames);
      ctx.body = { feedback_id: item.id, event_names: input.eventNames };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/feedbacks/:feedbackId/impact',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'feedbackImpact',
    tags: ['Insights'],
    summary: 'Feature impact: use of the linked events before and after the item shipped, by its voters too',
    description: `Before the item is completed: a 200 with shipped_at null. With no event linked yet (PUT the impact): a 200 with event_names [] and null measures. The span [shipped_at − days, shipped_at + days) is the request’s window: ${windowNote}`,
    params: FeedbackPath,
    query: ImpactQuery,
    responses: {
      200: json('The impact.', ImpactResult),
      400: plan400,
      402: plan402,
      ...common(' or feedback item'),
    },
    handler: async (ctx, { sql, clickhouse }, { project, params, query }) => {
      const item = await itemVoters(sql, project.id, params.feedbackId);
      const days = query.days ?? 30;
      const eventNames = (await findImpactLink(sql, project.id, item.id)) ?? [];
      ctx.body = await impactAnswer(
        clickhouse,
        { projectId: project.id, plan: project.plan },
        { feedbackId: item.id, eventNames, days, voters: item.voters },
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/insights/ship-dates',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'projectShipDates',
    tags: ['Insights'],
    summary: 'Feedback items completed in the window, with when (to mark ship dates on charts)',
    description:
      'Items whose latest status is `completed` and whose last completion falls in the window, oldest first; `shipped_at` is the one the impact route reads. The plan’s window clamps the request (a narrowed 200, `retention_clamped`).',
    params: ProjectPath,
    query: ShipDatesQuery,
    responses: { 200: json('The completed items.', ShipDatesResult), 400: plan400, ...common('') },
    handler: async (ctx, { sql, clickhouse }, { project, query }) => {
      ctx.body = await shipDatesAnswer(clickhouse, { projectId: project.id, plan: project.plan }, query, (ids) =>
        feedbackTitles(sql, project.id, ids),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/saved-queries',
    auth: 'projectAdmin',
    operationId: 'listSavedQueries',
    tags: ['Insights'],
    summary: 'The project’s saved SQL queries, newest first',
    description: 'Run one by sending its `sql` as the `query` of POST /projects/{id}/sql.',
    params: ProjectPath,
    responses: { 200: json('The saved queries.', z.array(SavedQuery)), ...common('') },
    handler: async (ctx, { sql }, { project }) => {
      ctx.body = (await listSavedQueries(sql, project.id)).map(presentSavedQuery);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/saved-queries',
    auth: 'projectAdmin',
    operationId: 'createSavedQuery',
    tags: ['Insights'],
    summary: 'Save a SQL query for the project’s data team',
    params: ProjectPath,
    body: body(SavedQueryBody, 'SavedQueryRequest'),
    responses: { 200: json('The saved query.', SavedQuery), 400: error('Validation failed (the reason names the field).'), ...common('') },
    handler: async (ctx, { sql }, { project, body }) => {
      const input = body;
      const account = ctx.state.account;
      if (!account) throw unauthorized('missing admin bearer token');
      const createdBy = await tokenHolderEmail(sql, account.email, ctx.state.memberId ?? null);
      ctx.body = presentSavedQuery(await createSavedQuery(sql, { projectId: project.id, name: input.name, sql: input.sql, createdBy }));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/saved-queries/:queryId',
    auth: 'projectAdmin',
    operationId: 'deleteSavedQuery',
    tags: ['Insights'],
    summary: 'Delete a saved query',
    params: z.object({ id: projectId, queryId: describe(z.uuid({ error: 'saved query not found' }), 'Saved query id.') }),
    responses: { 200: json('Deleted.', z.object({ id: z.uuid(), deleted: z.literal(true) })), ...common(' or saved query') },
    handler: async (ctx, { sql }, { project, params }) => {
      const id = params.queryId;
      if (!(await deleteSavedQuery(sql, project.id, id))) throw notFound('saved query not found');
      ctx.body = { id, deleted: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/live',
    auth: 'projectAdmin',
    operationId: 'liveEvents',
    tags: ['Insights'],
    summary: 'Live view: the project’s events as they are acknowledged (Server-Sent Events)',
    description:
      'A `text/event-stream`: each acknowledged event as `event: event` whose data is the Tracked event (SPEC 2.7), within 2 s; `event: ready` once every API process’s events reach the stream; a comment line every LIVE_HEARTBEAT_SECONDS (15) while the client owes nothing. ' +
      'A client owed more than 256 KB (it stopped reading or reads too slowly) is behind: the events that arrive meanwhile are skipped, not buffered; once it has taken its backlog it gets `event: skipped` with data `{"skipped": <count>}`, then live events again. ' +
      `Below Pro only ${PREDEFINED} are sent. 429 beyond LIVE_MAX_CONNECTIONS_PER_ACCOUNT (5) open streams of the account in one API process.`,
    params: ProjectPath,
    responses: {
      200: { description: 'The stream; it ends when the client leaves.', content: { 'text/event-stream': { schema: z.string() } } },
      ...common(''),
    },
    handler: liveStream,
  }),
];
