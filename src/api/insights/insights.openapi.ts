import { z } from 'zod';
import { MetricsErrorBody } from '../metrics/metrics.responses.js';
import { PREDEFINED_EVENTS } from '../metrics/measures.js';
import {
  ADMIN_TOKEN,
  ProjectPath,
  body,
  defaultError,
  describe,
  error,
  feedbackId,
  json,
  projectId,
  projectRefused,
  type Route,
} from '../openapi/building-blocks.js';
import { SavedQueryBody } from '../saved-queries/saved-queries.router.js';
import { FunnelBody, ImpactLinkBody, RetentionBody } from './insights.schema.js';

const metricsError = (description: string) => json(description, MetricsErrorBody);
const PREDEFINED = PREDEFINED_EVENTS.map((name) => `\`${name}\``).join(', ');

/** SPEC 2.8's echo fields, which every insights answer carries. */
const echo = {
  event_scope: z.enum(['all', 'predefined_only']).meta({ description: `\`predefined_only\` below Pro: only ${PREDEFINED} were read.` }),
  retention_clamped: z.boolean().meta({ description: 'True when the plan narrowed the requested window (still a 200).' }),
  retention_window_days: z.number().int().min(1).meta({ description: 'The plan’s allowance in days.' }),
  date_from: z.iso.date().meta({ description: 'First day of the window actually applied (UTC, inclusive).' }),
  date_to: z.iso.date().meta({ description: 'Last day of the window actually applied (UTC, inclusive).' }),
};

const FunnelStepResult = z
  .object({
    event_name: z.string(),
    users: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Users who did steps 1 to this one in order within the conversion window (docs/insights.md).' }),
    conversion_from_first: z.number().nullable().meta({ description: 'users / users of step 1; null when step 1 has none.' }),
    conversion_from_previous: z
      .number()
      .nullable()
      .meta({ description: 'users / users of the previous step; null for step 1, or when the previous step has none.' }),
    median_seconds_to_convert: z.number().nullable().meta({
      description:
        'Exact median, over the users who reached this step, of the seconds from their step 1 to their first completion of this step; null for step 1 and when nobody reached it.',
    }),
  })
  .meta({ id: 'FunnelStepResult' });

export const FunnelResult = z
  .object({
    ...echo,
    conversion_window_seconds: z.number().int(),
    breakdown: z.string().nullable().meta({ description: 'The property the funnel was split by, or null.' }),
    steps: z.array(FunnelStepResult),
    breakdown_values: z
      .array(
        z.object({
          value: z
            .string()
            .nullable()
            .meta({ description: 'A string as it is, another JSON value as its JSON text; null: the property is missing.' }),
          steps: z.array(FunnelStepResult),
        }),
      )
      .meta({ description: 'With `breakdown`: the funnel of the events carrying each value, most users at step 1 first; else empty.' }),
  })
  .meta({ id: 'FunnelResult' });

export const RetentionResult = z
  .object({
    ...echo,
    interval: z.enum(['day', 'week']),
    periods: z.number().int(),
    cohort_event: z.string().nullable(),
    return_event: z.string().nullable(),
    cohorts: z.array(
      z.object({
        cohort_start: z.iso.date().meta({ description: 'First day of the cohort’s day or week (weeks start on Monday, UTC).' }),
        users: z.number().int().min(0).meta({ description: 'Users whose first cohort event in the window falls in it (= retained[0]).' }),
        retained: z.array(z.number().int().min(0)).meta({
          description:
            'Users of the cohort with a return event in period 0, 1, …: period p is the p-th day or week after the cohort’s own. Periods that start after date_to are left out.',
        }),
      }),
    ),
  })
  .meta({ id: 'RetentionResult' });

export const EventNamesResult = z
  .object({
    ...echo,
    event_names: z.array(
      z.object({
        event_name: z.string(),
        event_count: z.number().int().min(0),
        predefined: z.boolean().meta({ description: `One of ${PREDEFINED}.` }),
      }),
    ),
  })
  .meta({ id: 'EventNamesResult' });

const ImpactSpan = z.object({ users: z.number().int().min(0), events: z.number().int().min(0) });
export const ImpactResult = z
  .object({
    ...echo,
    feedback_id: z.uuid(),
    event_names: z.array(z.string()),
    days: z.number().int(),
    shipped_at: z
      .string()
      .nullable()
      .meta({ description: 'When the item last became `completed` (RFC 3339, whole seconds); null while it is not completed.' }),
    voters: z.number().int().min(0).meta({ description: 'Users with a vote on the item now.' }),
    voters_adopted: z.number().int().min(0).nullable().meta({ description: 'Voters with a linked event in the days after shipped_at.' }),
    voters_adopted_mrr: z.number().nullable().meta({ description: 'The sum of those voters’ current MRR.' }),
    adoption_share: z.number().nullable().meta({ description: 'after.users / after.active_users; null without active users.' }),
    before: ImpactSpan.nullable().meta({ description: 'Users and events of the linked names in the `days` days before shipped_at.' }),
    after: ImpactSpan.extend({
      active_users: z.number().int().min(0).meta({ description: 'Users with any event (in scope) in that span.' }),
    })
      .nullable()
      .meta({ description: 'The same in the `days` days from shipped_at.' }),
    series: z.array(z.object({ date: z.iso.date(), users: z.number().int().min(0), events: z.number().int().min(0) })).meta({
      description: 'The linked events per UTC day from date_from to date_to; empty before shipping.',
    }),
  })
  .meta({ id: 'ImpactResult' });

export const SavedQuery = z
  .object({
    id: z.uuid(),
    name: z.string(),
    sql: z.string(),
    created_by: z.string().meta({ description: 'Email of the token’s holder.' }),
    created_at: z.string(),
  })
  .meta({ id: 'SavedQuery' });

const FeedbackPath = z.object({ id: projectId, feedbackId });
const common = (what: string) => ({
  401: error('Missing or invalid admin token (a member’s token needs the Team plan).'),
  403: projectRefused,
  404: error(`No such project${what}.`),
  default: defaultError,
});
const plan400 = metricsError(
  '`METRICS_INVALID_PARAMETER` (a field or parameter, named in the message), `METRICS_INVALID_DATE`, `METRICS_INVALID_RANGE`.',
);
const plan402 = metricsError(`\`METRICS_CUSTOM_EVENTS_REQUIRE_PRO\`: below Pro, the request names an event other than ${PREDEFINED}.`);
const windowNote =
  'The plan’s window clamps the request (a narrowed 200, `retention_clamped`); below Pro only the predefined events are read (`event_scope`).';

/** Registers the insights routes (docs/insights.md). */
export function registerInsightsPaths(route: Route): void {
  route({
    method: 'post',
    path: '/projects/{id}/insights/funnel',
    operationId: 'projectFunnel',
    tags: ['Insights'],
    summary: 'Funnel: users who did the steps in order within the conversion window',
    description: `A user counts at step n when they did steps 1..n in order (times non-decreasing) with step n at most conversionWindowSeconds after their step 1; every step inside the window. ${windowNote}`,
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: body(FunnelBody, 'FunnelRequest') },
    responses: { 200: json('The funnel.', FunnelResult), 400: plan400, 402: plan402, ...common('') },
  });
  route({
    method: 'post',
    path: '/projects/{id}/insights/retention',
    operationId: 'projectRetention',
    tags: ['Insights'],
    summary: 'Retention cohorts by day or week',
    description: `A user’s cohort is the day or week of their first cohort event in the window (any event by default); period p counts the cohort’s users with a return event in the p-th interval after it. ${windowNote}`,
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: body(RetentionBody, 'RetentionRequest') },
    responses: { 200: json('The cohorts, one per day or week of the window.', RetentionResult), 400: plan400, 402: plan402, ...common('') },
  });
  route({
    method: 'get',
    path: '/projects/{id}/event-names',
    operationId: 'projectEventNames',
    tags: ['Insights'],
    summary: 'Event names seen in the window, most tracked first (for pickers)',
    description: `Below Pro only ${PREDEFINED} are listed (\`event_scope: predefined_only\`). ${windowNote}`,
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath,
      query: z.object({
        date_from: describe(z.iso.date().optional(), 'First day (UTC). Default: 29 days before date_to.'),
        date_to: describe(z.iso.date().optional(), 'Last day (UTC). Default: today.'),
        limit: describe(z.number().int().min(1).max(1000).optional(), 'At most this many names (default 100).'),
      }),
    },
    responses: { 200: json('The names.', EventNamesResult), 400: plan400, ...common('') },
  });
  route({
    method: 'put',
    path: '/projects/{id}/feedbacks/{feedbackId}/impact',
    operationId: 'linkFeedbackImpact',
    tags: ['Insights'],
    summary: 'Link a feedback item to the events that show its feature in use',
    description: 'Replaces the item’s linked event names. Any name is accepted; reading the impact of a custom one needs Pro.',
    security: ADMIN_TOKEN,
    request: { params: FeedbackPath, body: body(ImpactLinkBody, 'ImpactLinkRequest') },
    responses: {
      200: json('The link as stored.', z.object({ feedback_id: z.uuid(), event_names: z.array(z.string()) })),
      400: metricsError('`METRICS_INVALID_PARAMETER`: eventNames must be 1 to 20 names of 1 to 100 characters.'),
      ...common(' or feedback item'),
    },
  });
  route({
    method: 'get',
    path: '/projects/{id}/feedbacks/{feedbackId}/impact',
    operationId: 'feedbackImpact',
    tags: ['Insights'],
    summary: 'Feature impact: use of the linked events before and after the item shipped, by its voters too',
    description: `Before the item is completed: a 200 with shipped_at null. The span [shipped_at − days, shipped_at + days) is the request’s window: ${windowNote}`,
    security: ADMIN_TOKEN,
    request: {
      params: FeedbackPath,
      query: z.object({ days: describe(z.number().int().min(1).max(365).optional(), 'Days before and after shipped_at (default 30).') }),
    },
    responses: {
      200: json('The impact.', ImpactResult),
      400: plan400,
      402: plan402,
      ...common(', feedback item, or linked events (PUT the impact first)'),
    },
  });
  route({
    method: 'get',
    path: '/projects/{id}/saved-queries',
    operationId: 'listSavedQueries',
    tags: ['Insights'],
    summary: 'The project’s saved SQL queries, newest first',
    description: 'Run one by sending its `sql` as the `query` of POST /projects/{id}/sql.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: { 200: json('The saved queries.', z.array(SavedQuery)), ...common('') },
  });
  route({
    method: 'post',
    path: '/projects/{id}/saved-queries',
    operationId: 'createSavedQuery',
    tags: ['Insights'],
    summary: 'Save a SQL query for the project’s data team',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: body(SavedQueryBody, 'SavedQueryRequest') },
    responses: { 200: json('The saved query.', SavedQuery), 400: error('Validation failed (the reason names the field).'), ...common('') },
  });
  route({
    method: 'delete',
    path: '/projects/{id}/saved-queries/{queryId}',
    operationId: 'deleteSavedQuery',
    tags: ['Insights'],
    summary: 'Delete a saved query',
    security: ADMIN_TOKEN,
    request: { params: z.object({ id: projectId, queryId: describe(z.uuid(), 'Saved query id.') }) },
    responses: { 200: json('Deleted.', z.object({ id: z.uuid(), deleted: z.literal(true) })), ...common(' or saved query') },
  });
  route({
    method: 'get',
    path: '/projects/{id}/live',
    operationId: 'liveEvents',
    tags: ['Insights'],
    summary: 'Live view: the project’s events as they are acknowledged (Server-Sent Events)',
    description:
      'A `text/event-stream`: each acknowledged event as `event: event` whose data is the Tracked event (SPEC 2.7), within 2 s; `event: ready` once every API process’s events reach the stream; a comment line every LIVE_HEARTBEAT_SECONDS (15). ' +
      `Below Pro only ${PREDEFINED} are sent. 429 beyond LIVE_MAX_CONNECTIONS_PER_ACCOUNT (5) open streams of the account in one API process.`,
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: { description: 'The stream; it ends when the client leaves.', content: { 'text/event-stream': { schema: z.string() } } },
      ...common(''),
    },
  });
}
