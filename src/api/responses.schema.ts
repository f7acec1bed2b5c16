import { z } from 'zod';
import type { TrackedEventResponse as TrackedEventType } from '../core/event.js';
import { METRICS_ERROR_STATUS, type MetricsErrorBody as MetricsErrorBodyType, type MetricsErrorCode } from './metrics/metrics.errors.js';
import {
  ADMIN_MEASURES,
  EVENT_MEASURES,
  FEEDBACK_MEASURES,
  INTERVALS,
  type Measure,
} from './metrics/measures.js';
import type * as metrics from './metrics/metrics.service.js';
import type { AdhocResult } from '../olap/adhoc-query.js';
import { FEEDBACK_CATEGORIES, FEEDBACK_STATUSES } from '../oltp/feedback.row.js';
import { DELIVERY_CHANNELS, DELIVERY_STATUSES } from '../oltp/deliveries.repo.js';
import { DEAD_LETTER_KINDS } from '../oltp/dead-letters.repo.js';
import type { presentDeadLetters } from './operator/operator.router.js';
import { INTEGRATION_EVENTS, INTEGRATION_KINDS } from '../oltp/integrations.repo.js';
import { NOTIFICATION_TYPES } from '../oltp/notification-payload.js';
import type { UnsubscribeLink as UnsubscribeLinkType } from '../oltp/notifications.repo.js';
import type { VoteState } from '../oltp/votes.repo.js';
import { PLANS } from '../core/plans.js';
import type { ErrorBody as ErrorBodyType } from './errors.js';
import type {
  presentAccount,
  presentComment,
  presentDelivery,
  presentFeedback,
  presentIntegration,
  presentMember,
  presentProject,
  presentSdkUser,
} from './presenters.js';

/*
 * Response bodies as they travel on the wire (SPEC 1, rule 1: snake_case), as zod schemas. They
 * validate nothing at run time: they describe what presenters.ts, the metrics service and the
 * error middleware produce, and the OpenAPI document (openapi.ts) is generated from them. Two
 * guards keep them honest: the compile-time checks at the end of this file compare each schema
 * with the TypeScript type of the code that builds the body, and test/openapi.test.ts validates
 * real responses against the served document, with undocumented fields refused.
 *
 * `.meta({ id })` names a schema: it becomes a component under #/components/schemas.
 */

const uuid = z.uuid();
const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 timestamp, UTC (`2026-01-31T12:00:00.000Z`)' });
const count = z.number().int().min(0);

// ---------------------------------------------------------------------------------------------
// Errors

export const ErrorBody = z
  .object({
    error: z.literal(true),
    reason: z.string().meta({ description: 'What went wrong. A validation error names the field: `title: must be 1 to 200 characters`.' }),
  })
  .meta({
    id: 'Error',
    description:
      'The server-wide error body (SPEC 7.1): authentication and authorization failures, validation errors of the non-metrics operations, 404, 409, 413, 500 and 503. There is no code field.',
  });

const METRICS_ERROR_CODES = Object.keys(METRICS_ERROR_STATUS) as [MetricsErrorCode, ...MetricsErrorCode[]];

export const MetricsErrorCodeSchema = z.enum(METRICS_ERROR_CODES).meta({
  id: 'MetricsErrorCode',
  description: `Stable code of a metrics refusal, with its status: ${METRICS_ERROR_CODES.map((code) => `${code} (${METRICS_ERROR_STATUS[code]})`).join(', ')}.`,
});

export const MetricsErrorBody = z
  .object({
    error: z.object({
      code: MetricsErrorCodeSchema,
      message: z.string().meta({ description: 'Human-readable explanation; not stable.' }),
    }),
  })
  .meta({
    id: 'MetricsError',
    description:
      'Refusals of the metrics API itself (SPEC 7.2): its 400s, the 402 and the 403 for an admin-only measure asked with an API key. `error` is an object here and a boolean in the server-wide body, so clients tell the two apart by its type.',
  });

// ---------------------------------------------------------------------------------------------
// Feedback, votes, comments, SDK users (SPEC 2.1 to 2.6)

export const FeedbackResponse = z
  .object({
    id: uuid,
    title: z.string(),
    description: z.string(),
    status: z.enum(FEEDBACK_STATUSES),
    category: z.enum(FEEDBACK_CATEGORIES),
    user_id: z.string().meta({ description: 'The submitter (the client app’s user id).' }),
    user_email: z.string().nullable().meta({ description: 'Email of the submitter, when one was given.' }),
    vote_count: count,
    has_voted: z.boolean().meta({ description: 'True only when the `X-User-Id` request header names a user who has voted.' }),
    comment_count: count,
    total_mrr: z.number().nullable().meta({ description: 'Combined MRR of all voters, when tracked.' }),
    created_at: timestamp,
    updated_at: timestamp,
    rejection_reason: z.string().max(500).nullable(),
    merged_into_id: uuid.nullable().meta({ description: 'The feedback this item was merged into.' }),
    merged_at: timestamp.nullable(),
    merged_feedback_ids: z.array(uuid).nullable().meta({ description: 'The feedback items merged into this one.' }),
  })
  .meta({ id: 'Feedback', description: 'A feedback item (SPEC 2.1).' });

export const VoteResponse = z
  .object({
    feedback_id: uuid,
    vote_count: count.meta({ description: 'The count after the action.' }),
    has_voted: z.boolean().meta({ description: 'Whether the user has a vote after the action.' }),
  })
  .meta({ id: 'Vote', description: 'The vote state after adding or removing a vote (SPEC 2.4).' });

export const CommentResponse = z
  .object({
    id: uuid,
    content: z.string(),
    user_id: z.string(),
    is_admin: z.boolean(),
    created_at: timestamp,
  })
  .meta({ id: 'Comment', description: 'A comment (SPEC 2.5).' });

export const SdkUserResponse = z
  .object({
    id: uuid.meta({ description: 'Internal identifier.' }),
    user_id: z.string().meta({ description: 'The client app’s user identifier.' }),
    mrr: z.number().nullable().meta({ description: 'Monthly recurring revenue.' }),
    first_seen_at: timestamp,
    last_seen_at: timestamp,
  })
  .meta({ id: 'SdkUser', description: 'A user of the client app (SPEC 2.6).' });

// ---------------------------------------------------------------------------------------------
// Events (SPEC 2.7)

const properties = z
  .record(z.string(), z.unknown())
  .nullable()
  .meta({ description: 'The properties object as sent, or null.' });

export const TrackedEventResponse = z
  .object({
    id: uuid.meta({ description: 'The eventId sent by the client, or a server-assigned UUIDv7.' }),
    event_name: z.string(),
    user_id: z.string(),
    properties,
    created_at: timestamp.meta({ description: 'The event’s `timestamp` as sent, or the time the server received it.' }),
  })
  .meta({ id: 'TrackedEvent', description: 'A tracked analytics event (SPEC 2.7).' });

export const BatchEventsResponse = z
  .object({
    accepted: count.meta({ description: 'How many events the batch held (all of them: a batch is accepted whole or not at all).' }),
    events: z.array(TrackedEventResponse).meta({ description: 'The stored events, in the order sent.' }),
  })
  .meta({ id: 'BatchEventsResult' });

// ---------------------------------------------------------------------------------------------
// Management: accounts and projects

const projectFields = {
  id: uuid,
  name: z.string(),
  archived: z.boolean().meta({ description: 'Archived projects are read-only for feedback.' }),
  suspended: z.boolean().meta({ description: 'Set by the operator; a suspended project’s API key gets 403.' }),
  created_at: timestamp,
  updated_at: timestamp,
};

export const ProjectResponse = z.object(projectFields).meta({ id: 'Project', description: 'A project, without its API key.' });

export const ProjectWithApiKeyResponse = z
  .object({
    ...projectFields,
    api_key: z.string().meta({ description: 'The project API key (`X-API-Key`). Shown only here: it is stored as a hash.' }),
  })
  .meta({ id: 'ProjectWithApiKey', description: 'A project with its new API key, answered when the key is created or rotated.' });

const accountFields = {
  id: uuid,
  email: z.string().meta({ description: 'Lower-cased email address.' }),
  plan: z.enum(PLANS),
  created_at: timestamp,
  updated_at: timestamp,
};

export const AccountResponse = z.object(accountFields).meta({ id: 'Account', description: 'An account, without its admin token.' });

export const AccountWithAdminTokenResponse = z
  .object({
    ...accountFields,
    admin_token: z.string().meta({ description: 'The account’s admin bearer token. Shown only here: it is stored as a hash.' }),
  })
  .meta({ id: 'AccountWithAdminToken', description: 'A new account with its admin token.' });

// ---------------------------------------------------------------------------------------------
// Management: team members and integrations

const memberFields = {
  id: uuid,
  project_id: uuid,
  email: z.string().meta({ description: 'As sent (trimmed); unique per project whatever its letter case.' }),
  created_at: timestamp,
};

export const MemberResponse = z.object(memberFields).meta({ id: 'Member', description: 'A team member of a project (Team plan), without its token.' });

export const MemberWithAdminTokenResponse = z
  .object({
    ...memberFields,
    admin_token: z.string().meta({
      description:
        'The member’s own admin bearer token of the project’s account: it acts as the account on every `/projects…` route, while the plan is Team. Shown only here: it is stored as a hash. Removing the member revokes it.',
    }),
  })
  .meta({ id: 'MemberWithAdminToken', description: 'A new team member with its admin token.' });

const integrationFields = {
  id: uuid,
  project_id: uuid,
  kind: z.enum(INTEGRATION_KINDS).meta({ description: 'Slack or Discord incoming webhook, or a generic signed webhook. Cannot be changed.' }),
  url: z.string().meta({ description: 'Absolute http or https URL the notifications are posted to.' }),
  events: z
    .array(z.enum(INTEGRATION_EVENTS))
    .nullable()
    .meta({ description: 'The notification types it receives; null: all of them, also types added later.' }),
  enabled: z.boolean().meta({ description: 'A disabled integration receives nothing.' }),
  has_secret: z.boolean().meta({ description: 'Whether a signing secret is set (always true for a webhook). The secret itself is never returned.' }),
  created_at: timestamp,
  updated_at: timestamp,
};

export const IntegrationResponse = z
  .object(integrationFields)
  .meta({ id: 'Integration', description: 'An integration of a project (Pro and Team plans), without its secret.' });

export const IntegrationWithSecretResponse = z
  .object({
    ...integrationFields,
    secret: z.string().meta({
      description: 'The signing secret the server generated (`whsec_…`), for a webhook created without one. Shown only here.',
    }),
  })
  .meta({ id: 'IntegrationWithSecret', description: 'A new webhook integration with the secret the server generated for it.' });

// ---------------------------------------------------------------------------------------------
// Notifications (README "Notifications")

export const DeliveryResponse = z
  .object({
    id: uuid.meta({ description: 'The delivery id: sent as `X-Feedback-Delivery-Id` to webhooks and used as the email Message-ID.' }),
    notification_id: z.string().meta({ description: 'The notification (one change of one item) this delivery belongs to.' }),
    type: z.enum(NOTIFICATION_TYPES),
    channel: z.enum(DELIVERY_CHANNELS),
    recipient: z.string().meta({ description: 'The email address, or the integration id.' }),
    integration_id: uuid.nullable().meta({ description: 'The integration, for Slack, Discord and webhook deliveries; null for emails and for deleted integrations.' }),
    status: z.enum(DELIVERY_STATUSES).meta({ description: '`pending` (queued or waiting for a retry), `delivered`, or `failed` (attempts spent or a permanent refusal).' }),
    attempts: count.meta({ description: 'Attempts made since the delivery was created or last retried by an operator.' }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed; null once delivered.' }),
    next_attempt_at: timestamp.nullable().meta({ description: 'When a pending delivery is due; null otherwise.' }),
    delivered_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Delivery', description: 'A notification’s delivery to one recipient: an email, a Slack or Discord message, or a webhook.' });

export const DeadLettersResponse = z
  .object({
    total: count.meta({ description: 'Dead letters matching the filter, on every page.' }),
    limit: count,
    offset: count,
    dead_letters: z.array(
      z
        .object({
          id: z.string().meta({ description: 'Dead letter id (an integer, as a string).' }),
          kind: z.enum(DEAD_LETTER_KINDS).meta({ description: '`event` (table events) or `fact` (table facts).' }),
          project_id: uuid.nullable().meta({ description: 'Project of the row; null only when the row’s own project id is not a UUID.' }),
          row_key: z.string().meta({ description: 'The row’s identity: `<project id>:<event id>` for an event, the outbox id for a fact.' }),
          payload: z.string().meta({ description: 'The row as it was sent to ClickHouse, as JSON text (NUL and lone surrogates stay escaped).' }),
          error_code: z.string().meta({ description: 'ClickHouse error code, e.g. `117`.' }),
          error_name: z.string().meta({ description: 'ClickHouse error name, e.g. `INCORRECT_DATA`.' }),
          error: z.string().meta({ description: 'ClickHouse’s message.' }),
          created_at: timestamp,
        })
        .meta({ id: 'DeadLetter', description: 'A row ClickHouse refused for its data, isolated from its batch.' }),
    ),
  })
  .meta({ id: 'DeadLetters' });

export const UnsubscribeResponse = z
  .object({
    unsubscribed: z.literal(true),
    feedback_id: uuid.meta({ description: 'The item whose status-change emails stop for this address.' }),
  })
  .meta({ id: 'Unsubscribed' });

export const UnsubscribeLinkResponse = z
  .object({
    feedback_id: uuid.meta({ description: 'The item whose status-change emails the link stops.' }),
    title: z.string().meta({ description: 'The item’s title.' }),
    email: z.string().meta({ description: 'The address the link was sent to (lowercase).' }),
    subscribed: z.boolean().meta({ description: 'Whether the address still gets the item’s status-change emails (as a voter or as the submitter).' }),
  })
  .meta({ id: 'UnsubscribeLink', description: 'What an unsubscribe link is for. Reading it changes nothing.' });

// ---------------------------------------------------------------------------------------------
// Operator ad-hoc SQL

export const AdhocSqlResponse = z
  .object({
    columns: z.array(z.object({ name: z.string(), type: z.string().meta({ description: 'ClickHouse type' }) })),
    rows: z.array(z.record(z.string(), z.unknown())).meta({ description: 'One object per row, keyed by column name; ClickHouse JSON encoding (64-bit integers as strings).' }),
    row_count: count,
    truncated: z.boolean().meta({ description: 'True when the result had more rows than the limit and was cut.' }),
    elapsed_ms: count,
  })
  .meta({ id: 'AdhocSqlResult' });

// ---------------------------------------------------------------------------------------------
// Metrics (SPEC 2.8, README "Metrics")

const echoFields = {
  event_scope: z.enum(['all', 'predefined_only']).meta({
    description:
      '`predefined_only` when custom event names were left out (below Pro). It affects only `event_count` and `unique_event_users`.',
  }),
  retention_clamped: z.boolean().meta({ description: 'True when the plan narrowed the requested window (still a 200).' }),
  retention_window_days: z.number().int().min(1).meta({ description: 'The plan’s allowance in days.' }),
  date_from: z.iso.date().meta({ description: 'First day of the window actually applied (UTC, inclusive).' }),
  date_to: z.iso.date().meta({ description: 'Last day of the window actually applied (UTC, inclusive).' }),
};

const MEASURE_DESCRIPTIONS: Record<Measure, string> = {
  event_count: 'Events in the window.',
  unique_event_users: 'Distinct users with events in the window (exact).',
  feedback_count: 'Feedback items created in the window.',
  vote_count: 'Votes added in the window minus votes removed in it: negative when more were removed than added.',
  comment_count: 'Comments added in the window.',
  sdk_users: 'SDK users first seen before the end (point in time).',
  new_sdk_users: 'SDK users first seen in the window.',
  active_sdk_users: 'SDK users registered or updated in the window.',
  paying_users: 'SDK users whose latest MRR is above 0 at the end (point in time).',
  total_mrr: 'Sum of the latest MRR of every SDK user at the end (point in time).',
  voter_mrr: '`total_mrr` of the users who voted in the window.',
};

const measure = (name: Measure, schema: z.ZodNumber) => schema.optional().meta({ description: MEASURE_DESCRIPTIONS[name] });

const keyMeasureFields = {
  event_count: measure('event_count', count),
  unique_event_users: measure('unique_event_users', count),
  feedback_count: measure('feedback_count', count),
  vote_count: measure('vote_count', z.number().int()),
  comment_count: measure('comment_count', count),
};

const adminMeasureFields = {
  ...keyMeasureFields,
  sdk_users: measure('sdk_users', count),
  new_sdk_users: measure('new_sdk_users', count),
  active_sdk_users: measure('active_sdk_users', count),
  paying_users: measure('paying_users', count),
  total_mrr: measure('total_mrr', z.number()),
  voter_mrr: measure('voter_mrr', z.number()),
};

export const KeyMeasureValues = z.object(keyMeasureFields).meta({
  id: 'MeasureValues',
  description: `Values of the requested measures (all of them by default); only those asked for are present. Measures of the API-key surface: ${[...EVENT_MEASURES, ...FEEDBACK_MEASURES].join(', ')}.`,
});

export const AdminMeasureValues = z.object(adminMeasureFields).meta({
  id: 'AdminMeasureValues',
  description: `Values of the requested measures (all of them by default); only those asked for are present. The admin-token surface adds the SDK-user and revenue measures: ${ADMIN_MEASURES.join(', ')}.`,
});

type Surface = 'Key' | 'Admin';

function metricsResponses<M extends typeof KeyMeasureValues | typeof AdminMeasureValues>(surface: Surface, measures: M) {
  const name = (kind: string) => (surface === 'Key' ? `Metrics${kind}` : `AdminMetrics${kind}`);
  return {
    summary: z.object({ ...echoFields, measures }).meta({ id: name('Summary'), description: 'Aggregate measures over the window.' }),
    timeseries: z
      .object({
        ...echoFields,
        interval: z.enum(INTERVALS),
        buckets: z
          .array(
            z.object({
              start: timestamp.meta({ description: 'Natural start of the bucket (weeks start on Monday, UTC).' }),
              measures,
            }),
          )
          .meta({ description: 'Every bucket that overlaps the window, in order, zero-filled. Point-in-time measures are taken at the bucket’s end.' }),
      })
      .meta({ id: name('Timeseries'), description: 'Measures per time bucket.' }),
    breakdown: z
      .object({
        ...echoFields,
        dimension: z.string().meta({ description: 'The dimension as requested.' }),
        rows: z
          .array(
            z.object({
              key: z.string().nullable().meta({ description: 'Value of the dimension; null for events without the property.' }),
              measures,
            }),
          )
          .meta({ description: 'Rows by the first measure descending, then by key; at most `limit`.' }),
      })
      .meta({ id: name('Breakdown'), description: 'Measures grouped by one dimension.' }),
  };
}

export const KeyMetrics = metricsResponses('Key', KeyMeasureValues);
export const AdminMetrics = metricsResponses('Admin', AdminMeasureValues);

export const MetricsEventsFeed = z
  .object({
    ...echoFields,
    events: z.array(TrackedEventResponse).meta({ description: 'Newest first.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'MetricsEventsFeed', description: 'The raw event feed (Pro and Team).' });

// ---------------------------------------------------------------------------------------------
// Health (outside /api/v1)

const check = z.enum(['ok', 'unavailable']);

export const HealthResponse = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

export const ReadinessResponse = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    checks: z.object({
      postgres: check,
      clickhouse: check,
      redis: check.optional().meta({ description: 'Present only when Redis is configured.' }),
    }),
  })
  .meta({ id: 'Readiness' });

// ---------------------------------------------------------------------------------------------
// Compile-time guards: each schema has the shape of the code that builds the body. A field added
// to, dropped from or retyped in a presenter (or here) fails `tsc` until both sides agree.

type KeysOf<T> = T extends unknown ? keyof T : never;
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameShape<Built, Schema> =
  Mutual<Built, Schema> extends true ? (Mutual<KeysOf<Built>, KeysOf<Schema>> extends true ? true : false) : false;
type Expect<T extends true> = T;
type Out<S extends z.ZodType> = z.output<S>;
type Result<F extends (...args: never[]) => unknown> = Awaited<ReturnType<F>>;

export type ResponseShapeChecks = [
  Expect<SameShape<ErrorBodyType, Out<typeof ErrorBody>>>,
  Expect<SameShape<MetricsErrorBodyType, Out<typeof MetricsErrorBody>>>,
  Expect<SameShape<ReturnType<typeof presentFeedback>, Out<typeof FeedbackResponse>>>,
  Expect<SameShape<VoteState, Out<typeof VoteResponse>>>,
  Expect<SameShape<ReturnType<typeof presentComment>, Out<typeof CommentResponse>>>,
  Expect<SameShape<ReturnType<typeof presentSdkUser>, Out<typeof SdkUserResponse>>>,
  Expect<SameShape<TrackedEventType, Out<typeof TrackedEventResponse>>>,
  Expect<SameShape<ReturnType<typeof presentProject>, Out<typeof ProjectResponse> | Out<typeof ProjectWithApiKeyResponse>>>,
  Expect<SameShape<ReturnType<typeof presentAccount>, Out<typeof AccountResponse> | Out<typeof AccountWithAdminTokenResponse>>>,
  Expect<SameShape<ReturnType<typeof presentMember>, Out<typeof MemberResponse> | Out<typeof MemberWithAdminTokenResponse>>>,
  Expect<SameShape<ReturnType<typeof presentIntegration>, Out<typeof IntegrationResponse> | Out<typeof IntegrationWithSecretResponse>>>,
  Expect<SameShape<AdhocResult, Out<typeof AdhocSqlResponse>>>,
  Expect<SameShape<ReturnType<typeof presentDelivery>, Out<typeof DeliveryResponse>>>,
  Expect<SameShape<UnsubscribeLinkType, Out<typeof UnsubscribeLinkResponse>>>,
  Expect<SameShape<ReturnType<typeof presentDeadLetters>, Out<typeof DeadLettersResponse>>>,
  Expect<Mutual<keyof Out<typeof AdminMeasureValues>, Measure>>,
  Expect<SameShape<Result<typeof metrics.summary>, Out<typeof AdminMetrics.summary>>>,
  Expect<SameShape<Result<typeof metrics.timeseries>, Out<typeof AdminMetrics.timeseries>>>,
  // The service's `dimension` is typed `string | undefined`, but a missing one is a 400 before any body is built.
  Expect<SameShape<Omit<Result<typeof metrics.breakdown>, 'dimension'> & { dimension: string }, Out<typeof AdminMetrics.breakdown>>>,
  Expect<SameShape<Result<typeof metrics.eventsFeed>, Out<typeof MetricsEventsFeed>>>,
];
