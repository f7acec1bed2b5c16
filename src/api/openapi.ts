import { OpenAPIRegistry, OpenApiGeneratorV3, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { stringify } from 'yaml';
import { z } from 'zod';
import type { MetricsErrorCode } from '../metrics/errors.js';
import { ADMIN_SURFACE_MEASURES, INTERVALS, KEY_SURFACE_MEASURES, PREDEFINED_EVENTS } from '../metrics/measures.js';
import { MAX_BUCKETS } from '../metrics/window.js';
import { PLAN_LIMITS } from '../plans.js';
import { BatchEventsBody, MAX_BATCH_EVENTS, MAX_PROPERTIES_BYTES, TrackEventBody } from './events.schema.js';
import {
  AddCommentBody,
  AddVoteBody,
  CreateFeedbackBody,
  ListFeedbacksQuery,
  MergeFeedbackBody,
  RegisterUserBody,
  RemoveVoteBody,
  UpdateFeedbackBody,
} from './feedback.schema.js';
import { CreateIntegrationBody, UpdateIntegrationBody } from './integrations.schema.js';
import { CreateAccountBody, CreateProjectBody, SuspendProjectBody, UpdateAccountBody, UpdateProjectBody } from './management.schema.js';
import { CreateMemberBody } from './members.schema.js';
import {
  AccountResponse,
  AccountWithAdminTokenResponse,
  AdhocSqlResponse,
  AdminMetrics,
  BatchEventsResponse,
  CommentResponse,
  DeliveryResponse,
  ErrorBody,
  FeedbackResponse,
  HealthResponse,
  IntegrationResponse,
  IntegrationWithSecretResponse,
  KeyMetrics,
  MemberResponse,
  MemberWithAdminTokenResponse,
  MetricsErrorBody,
  MetricsEventsFeed,
  ProjectResponse,
  ProjectWithApiKeyResponse,
  ReadinessResponse,
  SdkUserResponse,
  TrackedEventResponse,
  UnsubscribeLinkResponse,
  UnsubscribeResponse,
  VoteResponse,
} from './responses.schema.js';
import { ListDeliveriesQuery } from './deliveries.schema.js';
import { AdhocSqlBody } from './sql.router.js';

/*
 * The OpenAPI 3.0 description of the API (SPEC 9), generated from the zod schemas themselves: the
 * request schemas that validate bodies and queries (*.schema.ts, imported as they are) and the
 * response schemas of responses.schema.ts, so a changed constraint or field shows up here.
 *
 * Generator: @asteasolutions/zod-to-openapi 9 (peer zod ^4, no Node engine constraint, one
 * dependency: openapi3-ts). zod 4's own `z.toJSONSchema({ target: 'openapi-3.0' })` converts one
 * schema at a time; everything around it (paths, parameters out of a query object, request
 * bodies, responses, components and $refs, security) would be hand-written here. The library
 * builds all of that, has a dedicated 3.0 generator (`nullable`, not 3.1 type arrays), and reads
 * the schemas the way the API uses them: for bodySchema()'s `z.preprocess` it describes the object
 * the body is validated against (camelCase keys), and for a transform (`includeMerged`, `eventId`)
 * the input the client sends. Schemas are named with zod's own `.meta({ id })`, so zod is not
 * patched (no `extendZodWithOpenApi`).
 *
 * What keeps it from drifting: routes are checked against Koa's router stacks, and real responses
 * against these schemas, by test/openapi.test.ts; response schemas are checked against the
 * presenters' types at compile time (responses.schema.ts).
 *
 * Metrics query parameters have no zod schema in the service (it parses them itself, to answer
 * METRICS_* codes); they are described here from the constants the service uses.
 */

export const OPENAPI_VERSION = '3.0.3';
export const API_VERSION = '1.0.0';

/** Files the docs page loads, all served by openapi.router.ts. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-initializer.js'] as const;

// ---------------------------------------------------------------------------------------------
// Building blocks

const json = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(description, ErrorBody);
const metricsError = (description: string) => json(description, MetricsErrorBody);
const codes = (...list: MetricsErrorCode[]) => list.map((code) => `\`${code}\``).join(', ');

const defaultError = error(
  'Any other failure, in the server-wide error body: 405 with `Allow` for a method this path does not have, 413 for ' +
    'a body over the limit (JSON 1 MiB, batches 5 MiB), 500, and 503 with `Retry-After` while the service shuts down.',
);

/**
 * A request body schema with descriptions added to some fields. bodySchema() wraps the object in a
 * z.preprocess; the description is built from that object's own shape, so every constraint stays
 * the validating schema's. A description of a field the schema does not have is an error.
 */
function withFieldDocs<S extends z.ZodType>(schema: S, docs: Partial<Record<keyof ShapeOf<S>, string>>): z.ZodType {
  const object = schema instanceof z.ZodPipe ? schema.out : schema;
  if (!(object instanceof z.ZodObject)) throw new Error('withFieldDocs: not an object schema');
  const shape = object.shape as Record<string, z.ZodType>;
  const described: Record<string, z.ZodType> = {};
  for (const [field, description] of Object.entries(docs) as [string, string][]) {
    const fieldSchema = shape[field];
    if (!fieldSchema) throw new Error(`withFieldDocs: the schema has no field ${field}`);
    described[field] = fieldSchema.meta({ description });
  }
  return object.extend(described);
}

/** The shape of an object schema, or of the object inside bodySchema()'s z.preprocess. */
type ShapeOf<S> = S extends z.ZodPipe<infer _In, infer O> ? ShapeOf<O> : S extends z.ZodObject<infer Shape> ? Shape : never;

/** Request bodies: the schemas that validate them, named as components, described in camelCase. */
function body(schema: z.ZodType, name: string, description = '') {
  return {
    description:
      `${description}${description ? ' ' : ''}Field names are given in camelCase; the snake_case spelling of each top-level field ` +
      '(`user_id` for `userId`) is accepted too. When both are sent, the camelCase one wins.',
    required: true,
    content: { 'application/json': { schema: schema.meta({ id: name }) } },
  };
}

/** A parameter's description, given once (on the parameter, not repeated on its schema). */
const describe = <S extends z.ZodType>(schema: S, description: string, extra: Record<string, unknown> = {}): S =>
  schema.meta({ param: { description, ...extra } });

const API_KEY = [{ ApiKeyAuth: [] }];
const ADMIN_TOKEN = [{ AdminToken: [] }];
const OPERATOR_TOKEN = [{ OperatorToken: [] }];
const PUBLIC: RouteConfig['security'] = [];

/** Paths outside the /api/v1 prefix: health, the document itself and the docs page. */
const ROOT_SERVER = [{ url: '/', description: 'The service root, outside the /api/v1 prefix' }];
const API_SERVER = { url: '/api/v1', description: 'This service (relative to the host that serves this document)' };

const feedbackId = describe(z.uuid(), 'Feedback id. A malformed id is a 404, like a missing one.');
const projectId = describe(z.uuid(), 'Project id. 404 when no such project exists, 403 when it belongs to another account.');

const FeedbackPath = z.object({ id: feedbackId });
const ProjectPath = z.object({ id: projectId });
const ProjectFeedbackPath = z.object({ id: projectId, feedbackId });
const ProjectMemberPath = z.object({
  id: projectId,
  memberId: describe(z.uuid(), 'Member id. 404 when it is not a member of this project (a malformed id too).'),
});
const ProjectIntegrationPath = z.object({
  id: projectId,
  integrationId: describe(z.uuid(), 'Integration id. 404 when it is not an integration of this project (a malformed id too).'),
});

const ViewerHeader = z.object({
  'X-User-Id': describe(
    z.string().optional(),
    'The current user of the client app. It makes `has_voted` personal; without it `has_voted` is false.',
  ),
});

/**
 * GET /feedbacks query: the schema that validates it, with descriptions added. Query parameters
 * are strings on the wire, so the default of `includeMerged` (a boolean after its transform) is
 * shown as sent (normalizeParameter).
 */
const { shape } = ListFeedbacksQuery;
const FeedbackListQuery = ListFeedbacksQuery.extend({
  status: describe(shape.status, 'Only items in this status.'),
  category: describe(shape.category, 'Only items of this category.'),
  includeMerged: describe(
    shape.includeMerged,
    'Include items merged into others (`true`/`false`, also `1`/`0`). Default false: merged items are left out.',
  ),
  sort: describe(
    shape.sort,
    '`votes` (vote count descending, the default), `newest`, `oldest`, `comments` (comment count descending). Ties by creation time, then id.',
  ),
  limit: describe(shape.limit, 'Page size, 1 to 1000. Without `limit` and `offset` every item is returned.'),
  offset: describe(shape.offset, 'Items to skip.'),
});

/**
 * Every request body: the schema that validates it, with descriptions of the fields whose
 * constraints do not say it all, named as a component.
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
  registerSdkUser: body(
    withFieldDocs(RegisterUserBody, { mrr: 'Monthly recurring revenue. Omitted: the stored figure is kept; null: it is cleared.' }),
    'RegisterSdkUserRequest',
  ),
  trackEvent: body(
    withFieldDocs(TrackEventBody, {
      eventName: `Any name is accepted on every tier; ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} are the predefined ones (readable in metrics on every plan).`,
      properties: `Free key-value pairs: a JSON object of at most ${MAX_PROPERTIES_BYTES / 1024} KiB.`,
      timestamp:
        'When the event happened: ISO 8601 with a time zone, at most 1 hour ahead and 2 years back (offline SDKs, imports). Default: when the server received it.',
      eventId:
        'A client-chosen UUID. An eventId already accepted for the project is not stored again; the answer is the first request’s event. Default: a server-assigned UUIDv7.',
    }),
    'TrackEventRequest',
  ),
  trackEventBatch: body(
    withFieldDocs(BatchEventsBody, { events: `1 to ${MAX_BATCH_EVENTS} events, each with the fields of /events/track.` }),
    'TrackEventBatchRequest',
    'Each event takes the fields of /events/track, in either casing.',
  ),
  adhocSql: body(
    withFieldDocs(AdhocSqlBody, {
      query: 'One SELECT (no SETTINGS clause), with `{name:Type}` parameters.',
      params: 'Values of the query’s parameters, by name.',
    }),
    'AdhocSqlRequest',
  ),
  createAccount: body(withFieldDocs(CreateAccountBody, { plan: 'Default: free.' }), 'CreateAccountRequest'),
  updateAccountPlan: body(UpdateAccountBody, 'UpdateAccountPlanRequest'),
  suspendProject: body(SuspendProjectBody, 'SuspendProjectRequest'),
  createProject: body(CreateProjectBody, 'CreateProjectRequest'),
  updateProject: body(UpdateProjectBody, 'UpdateProjectRequest', 'At least one of `name` and `archived`.'),
  updateFeedbackStatus: body(
    withFieldDocs(UpdateFeedbackBody, {
      rejectionReason: 'Accepted only when the resulting status is `rejected`; cleared when an item leaves `rejected`.',
    }),
    'UpdateFeedbackStatusRequest',
    'At least one of `status` and `rejectionReason`.',
  ),
  mergeFeedback: body(withFieldDocs(MergeFeedbackBody, { intoId: 'The target item, in the same project.' }), 'MergeFeedbackRequest'),
  createMember: body(
    withFieldDocs(CreateMemberBody, { email: 'Trimmed; unique per project whatever its letter case (409 otherwise).' }),
    'CreateMemberRequest',
  ),
  createIntegration: body(
    withFieldDocs(CreateIntegrationBody, {
      kind: '`slack` or `discord` (their incoming-webhook URL), or `webhook` (a signed POST to any URL).',
      url: 'Absolute http or https URL; any other scheme, or a relative URL, is a 400.',
      secret:
        'Webhooks only (400 for slack and discord): the HMAC-SHA256 signing key. Omitted for a webhook: the server generates one and returns it once, as `secret`. Never returned otherwise.',
      events: 'Distinct notification types. Omitted or null: all of them, also types added later.',
      enabled: 'Default true.',
    }),
    'CreateIntegrationRequest',
  ),
  updateIntegration: body(
    withFieldDocs(UpdateIntegrationBody, {
      secret: 'Webhooks only: replaces the signing secret (it is not returned).',
      events: 'Distinct notification types; null: all of them.',
    }),
    'UpdateIntegrationRequest',
    'At least one of `url`, `secret`, `events` and `enabled`; absent fields are kept. `kind` cannot be changed (400).',
  ),
});

// Metrics query parameters (README "Metrics"), read verbatim; each may be given at most once.

const dateParam = (which: 'first' | 'last') =>
  describe(
    z.iso.date().optional(),
    which === 'first'
      ? 'First day, `YYYY-MM-DD`, UTC, inclusive. Default: 29 days before `date_to`. A window longer than the plan allows is narrowed to its most recent days (`retention_clamped`).'
      : 'Last day, `YYYY-MM-DD`, UTC, inclusive. Default: today.',
  );

const eventParam = describe(
  z.string().min(1).max(100).optional(),
  `Restrict the event measures (the feed) to one event name. Below Pro, a name other than ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} is a 402.`,
);

/** `measures=a,b`: an array in OpenAPI's form style, unexploded. */
const measuresParam = (names: readonly string[], description: string) =>
  describe(z.array(z.enum(names as [string, ...string[]])).optional(), description, { style: 'form', explode: false });

const limitParam = (fallback: number, what: string) =>
  describe(z.number().int().min(1).max(1000).optional().meta({ default: fallback }), `At most this many ${what}, 1 to 1000.`);

function metricsQueries(surface: 'key' | 'admin') {
  const names = surface === 'key' ? KEY_SURFACE_MEASURES : ADMIN_SURFACE_MEASURES;
  const refusals =
    ' An unknown name is a 400 `METRICS_UNKNOWN_MEASURE`' +
    (surface === 'key' ? '; an SDK-user or revenue measure is a 403 `METRICS_MEASURE_REQUIRES_ADMIN_TOKEN` on this surface.' : '.');
  const common = { date_from: dateParam('first'), date_to: dateParam('last'), event: eventParam };
  return {
    summary: z.object({
      ...common,
      measures: measuresParam(names, `Comma-separated subset of the measures; default: all of them.${refusals}`),
    }),
    timeseries: z.object({
      ...common,
      measures: measuresParam(names, `Comma-separated subset of the measures; default: all of them.${refusals}`),
      interval: describe(
        z.enum(INTERVALS).optional().meta({ default: 'day' }),
        `Bucket size (weeks start on Monday, UTC); every bucket is present, zero-filled. More than ${MAX_BUCKETS} buckets is a 400.`,
      ),
    }),
    breakdown: z.object({
      ...common,
      measures: measuresParam(
        names,
        `Comma-separated subset of the measures; default: all of those the dimension can split. One it cannot split is a 400 \`METRICS_MEASURE_NOT_SPLITTABLE\`.${refusals}`,
      ),
      // The service's own check: src/metrics/service.ts breakdown() and PROPERTY_KEY.
      dimension: describe(
        z
          .string()
          .regex(/^(event_name|category|status|property\.[A-Za-z0-9_$\-.:@ ]{1,100})$/)
          .meta({ example: 'property.plan' }),
        '`event_name` (Pro and Team; 402 below), `category`, `status` (as of `date_to`), or `property.<key>` (a top-level event property; events without it form the row with key null). Required.',
      ),
      limit: limitParam(10, 'rows (by the first measure descending)'),
    }),
    events: z.object({
      ...common,
      limit: limitParam(100, 'events (newest first)'),
      cursor: describe(z.string().optional(), 'The `next_cursor` of the previous page.'),
      user_id: describe(z.string().min(1).optional(), 'Only this user’s events.'),
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// The document

/** The rate limiter's refusal: on every route of the API (health and docs are not limited). */
const tooManyRequests = {
  ...error(
    'Rate limit exceeded: the budget of the API key or token (ingestion and other routes apart), or of the client IP ' +
      'after failed authentications. Limited responses of every status carry the RateLimit-* headers.',
  ),
  headers: {
    'Retry-After': { description: 'Seconds until the budget allows a request again.', schema: { type: 'integer' as const } },
    'RateLimit-Limit': { description: 'Requests the budget allows per window.', schema: { type: 'integer' as const } },
    'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' as const } },
    'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' as const } },
  },
};

const UNLIMITED_PATHS = new Set(['/healthz', '/readyz', '/docs']);

function register(registry: OpenAPIRegistry) {
  const route = (config: RouteConfig) =>
    registry.registerPath(
      UNLIMITED_PATHS.has(config.path) || config.path.startsWith('/openapi')
        ? config
        : { ...config, responses: { ...config.responses, 429: tooManyRequests } },
    );
  const requests = requestBodies();

  registry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'Project API key (`fbk_…`), for the client app. 401 when missing or unknown, 403 when the project is suspended.',
  });
  registry.registerComponent('securitySchemes', 'AdminToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fba_…',
    description:
      'Account admin token, for the project owner or a team member (both act as the account): `/projects…`. 401 when missing or unknown, and for a team member’s token while the plan is not Team; 403 for a project of another account.',
  });
  registry.registerComponent('securitySchemes', 'OperatorToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fbo_…',
    description: 'Operator token (`OPERATOR_TOKEN`), for whoever runs the service: `/admin/…`.',
  });

  // Feedback (SPEC 4.1 to 4.7)

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
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
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
    description: 'The creator gets the first vote, so `vote_count` is 1. Project members and integrations are notified.',
    security: API_KEY,
    request: { body: requests.createFeedback },
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

  // SDK users and events (SPEC 4.8, 4.9)

  route({
    method: 'post',
    path: '/users/register',
    operationId: 'registerSdkUser',
    tags: ['SDK users'],
    summary: 'Register or update an SDK user',
    description:
      'Creates the user, or updates `last_seen_at` and `mrr` of a known one. An omitted `mrr` keeps the stored figure; `"mrr": null` clears it. Allowed on archived projects.',
    security: API_KEY,
    request: { body: requests.registerSdkUser },
    responses: {
      200: json('The user.', SdkUserResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
  });

  const unavailable = {
    description:
      'The queue (Redis) or, without Redis, the local ingest log cannot take the events (full at INGEST_LOG_MAX_BYTES while ClickHouse is behind, or the disk is full): nothing of the request was acknowledged; retry. Server-wide error body.',
    headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' as const } } },
    content: { 'application/json': { schema: ErrorBody } },
  };
  const ingestion =
    'Any event name is accepted on every tier. The answer comes once the event is durable. An `eventId` already accepted for the project is not stored again: the answer is the first request’s event.';

  route({
    method: 'post',
    path: '/events/track',
    operationId: 'trackEvent',
    tags: ['Events'],
    summary: 'Track an analytics event',
    description: ingestion,
    security: API_KEY,
    request: { body: requests.trackEvent },
    responses: {
      200: json('The stored event.', TrackedEventResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      503: unavailable,
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/events/batch',
    operationId: 'trackEventBatch',
    tags: ['Events'],
    summary: 'Track a batch of events',
    description: `1 to ${MAX_BATCH_EVENTS} events, body up to 5 MiB, validated all or nothing: one bad event is a 400 naming its index (\`events.3.userId: is required\`) and nothing is stored. ${ingestion}`,
    security: API_KEY,
    request: { body: requests.trackEventBatch },
    responses: {
      200: json('The stored events.', BatchEventsResponse),
      400: error('Validation failed; the reason names the field and the event’s index.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      413: error('The body is larger than 5 MiB.'),
      503: unavailable,
      default: defaultError,
    },
  });

  // Metrics (SPEC 4.10, README "Metrics"), on two surfaces

  const metricsIntro =
    'Every response echoes what the server ran: `event_scope`, `retention_clamped`, `retention_window_days`, `date_from`, `date_to`. ' +
    'Plan effects are narrowed 200s (custom event names left out below Pro; the window clamped to the plan’s allowance), except the 402s.';
  const base400 = ['METRICS_INVALID_DATE', 'METRICS_INVALID_RANGE', 'METRICS_INVALID_PARAMETER'] as const;
  const operations = {
    summary: {
      summary: 'Aggregate metrics',
      response: { key: KeyMetrics.summary, admin: AdminMetrics.summary },
      codes400: [...base400, 'METRICS_UNKNOWN_MEASURE'],
      codes402: 'an `event` filter naming a custom event, below Pro',
    },
    timeseries: {
      summary: 'Metrics per time bucket',
      response: { key: KeyMetrics.timeseries, admin: AdminMetrics.timeseries },
      codes400: [...base400, 'METRICS_UNKNOWN_MEASURE', 'METRICS_INVALID_INTERVAL', 'METRICS_TOO_MANY_BUCKETS'],
      codes402: 'an `event` filter naming a custom event, below Pro',
    },
    breakdown: {
      summary: 'Metrics grouped by one dimension',
      response: { key: KeyMetrics.breakdown, admin: AdminMetrics.breakdown },
      codes400: [
        ...base400,
        'METRICS_UNKNOWN_MEASURE',
        'METRICS_INVALID_DIMENSION',
        'METRICS_MEASURE_NOT_SPLITTABLE',
        'METRICS_INVALID_LIMIT',
      ],
      codes402: 'a breakdown by `event_name`, or an `event` filter naming a custom event, below Pro',
    },
    events: {
      summary: 'Raw event feed (Pro and Team)',
      response: { key: MetricsEventsFeed, admin: MetricsEventsFeed },
      codes400: [...base400, 'METRICS_INVALID_LIMIT', 'METRICS_INVALID_CURSOR'],
      codes402: 'any request below Pro',
    },
  } satisfies Record<
    string,
    { summary: string; response: { key: z.ZodType; admin: z.ZodType }; codes400: MetricsErrorCode[]; codes402: string }
  >;

  const keyQueries = metricsQueries('key');
  const adminQueries = metricsQueries('admin');
  for (const [name, op] of Object.entries(operations) as [keyof typeof operations, (typeof operations)[keyof typeof operations]][]) {
    const capitalized = `${name[0]?.toUpperCase()}${name.slice(1)}`;
    const bad = metricsError(`${codes(...op.codes400)}. A parameter given twice is \`METRICS_INVALID_PARAMETER\`.`);
    const pro = metricsError(`\`METRICS_CUSTOM_EVENTS_REQUIRE_PRO\`: ${op.codes402}.`);
    route({
      method: 'get',
      path: `/metrics/${name}`,
      operationId: `metrics${capitalized}`,
      tags: ['Metrics'],
      summary: `${op.summary}, for the API key’s project`,
      description: metricsIntro,
      security: API_KEY,
      request: { query: keyQueries[name] },
      responses: {
        200: json('The metrics.', op.response.key),
        400: bad,
        401: error('Missing or invalid API key.'),
        402: pro,
        403:
          name === 'events'
            ? error('The project is suspended.')
            : json(
                'The project is suspended (server-wide body), or an SDK-user or revenue measure was asked (`METRICS_MEASURE_REQUIRES_ADMIN_TOKEN`, metrics body).',
                z.union([ErrorBody, MetricsErrorBody]),
              ),
        default: defaultError,
      },
    });
    route({
      method: 'get',
      path: `/projects/{id}/metrics/${name}`,
      operationId: `projectMetrics${capitalized}`,
      tags: ['Metrics'],
      summary: `${op.summary}, for a project of the admin token’s account`,
      description: `${metricsIntro} This surface adds the SDK-user and revenue measures.`,
      security: ADMIN_TOKEN,
      request: { params: ProjectPath, query: adminQueries[name] },
      responses: {
        200: json('The metrics.', op.response.admin),
        400: bad,
        401: error('Missing or invalid admin token.'),
        402: pro,
        403: error('The project belongs to another account, or is suspended.'),
        404: error('No such project.'),
        default: defaultError,
      },
    });
  }

  // Operator (DESIGN 3)

  route({
    method: 'post',
    path: '/admin/sql',
    operationId: 'runAdhocSql',
    tags: ['Operator'],
    summary: 'Run one read-only ClickHouse query',
    description:
      'Readonly, 10 s, 10,000 rows; a SETTINGS clause is refused. `params` are the values of the query’s `{name:Type}` parameters.',
    security: OPERATOR_TOKEN,
    request: { body: requests.adhocSql },
    responses: {
      200: json('The result.', AdhocSqlResponse),
      400: error('Validation failed, or the query was refused or failed (`query: …`).'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/admin/accounts',
    operationId: 'createAccount',
    tags: ['Operator'],
    summary: 'Create an account',
    security: OPERATOR_TOKEN,
    request: { body: requests.createAccount },
    responses: {
      200: json('The account, with its admin token (shown only here).', AccountWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      409: error('An account with this email exists.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/admin/accounts/{id}',
    operationId: 'updateAccountPlan',
    tags: ['Operator'],
    summary: 'Change an account’s plan',
    description: 'A downgrade keeps existing projects and items; only new ones are refused past the limit.',
    security: OPERATOR_TOKEN,
    request: { params: z.object({ id: describe(z.uuid(), 'Account id.') }), body: requests.updateAccountPlan },
    responses: {
      200: json('The account.', AccountResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such account.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/admin/projects/{id}',
    operationId: 'suspendProject',
    tags: ['Operator'],
    summary: 'Suspend or reinstate a project',
    description: 'A suspended project’s API key gets 403 on every request.',
    security: OPERATOR_TOKEN,
    request: { params: z.object({ id: describe(z.uuid(), 'Project id.') }), body: requests.suspendProject },
    responses: {
      200: json('The project.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid operator token.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  // Projects of the admin token's account (DESIGN 3)

  route({
    method: 'post',
    path: '/projects',
    operationId: 'createProject',
    tags: ['Projects'],
    summary: 'Create a project',
    security: ADMIN_TOKEN,
    request: { body: requests.createProject },
    responses: {
      200: json('The project, with its API key (shown only here and on rotation).', ProjectWithApiKeyResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      402: error(
        `The plan’s project limit is reached (Free ${PLAN_LIMITS.free.maxProjects}, Pro ${PLAN_LIMITS.pro.maxProjects}, Team unlimited).`,
      ),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects',
    operationId: 'listProjects',
    tags: ['Projects'],
    summary: 'List the account’s projects',
    security: ADMIN_TOKEN,
    responses: {
      200: json('The projects, without keys.', z.array(ProjectResponse)),
      401: error('Missing or invalid admin token.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}',
    operationId: 'getProject',
    tags: ['Projects'],
    summary: 'Get a project',
    description: 'Also answers for a suspended project.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/projects/{id}',
    operationId: 'updateProject',
    tags: ['Projects'],
    summary: 'Rename or archive a project',
    description: 'An archived project is read-only for feedback: creating items, voting, unvoting and commenting are 403.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: requests.updateProject },
    responses: {
      200: json('The project, without its key.', ProjectResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/api-keys',
    operationId: 'rotateApiKey',
    tags: ['Projects'],
    summary: 'Rotate the project’s API key',
    description: 'The old key stops working at once.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The project with its new API key.', ProjectWithApiKeyResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

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

  // Team members and integrations of a project (SPEC 8.2)

  const teamOnly = error('The account’s plan is not Team.');
  const integrationsPlan = error('The account’s plan is Free (integrations need Pro or Team).');
  const projectRefused = error('The project belongs to another account, or is suspended.');
  const notMember = error('No such project, or no such member in it.');
  const memberRefused = error(
    "The project belongs to another account, or is suspended; or a team member's token: only the account owner's token adds members or removes other members (a member may remove itself).",
  );
  const notIntegration = error('No such project, or no such integration in it.');

  route({
    method: 'post',
    path: '/projects/{id}/members',
    operationId: 'addMember',
    tags: ['Team members'],
    summary: 'Add a team member, with its own admin token',
    description:
      'Team plan only. The member gets its own admin token of the project’s account, shown only in this response: it acts as the account on every `/projects…` route (all of the account’s projects) while the plan is Team, and is revoked when the member is removed.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: requests.createMember },
    responses: {
      200: json('The member, with its admin token (shown only here).', MemberWithAdminTokenResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid admin token.'),
      402: teamOnly,
      403: memberRefused,
      404: error('No such project.'),
      409: error('The project already has a member with this email (in any letter case).'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/members',
    operationId: 'listMembers',
    tags: ['Team members'],
    summary: 'List a project’s team members',
    description:
      'Oldest first. Answers on every plan: members added on Team are kept after a downgrade (their tokens are refused until the plan is Team again).',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The members, without tokens.', z.array(MemberResponse)),
      401: error('Missing or invalid admin token.'),
      403: projectRefused,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/projects/{id}/members/{memberId}',
    operationId: 'removeMember',
    tags: ['Team members'],
    summary: 'Remove a team member',
    description: 'Revokes the member’s admin token at once. Allowed on every plan.',
    security: ADMIN_TOKEN,
    request: { params: ProjectMemberPath },
    responses: {
      200: json('The removed member.', MemberResponse),
      401: error('Missing or invalid admin token.'),
      403: memberRefused,
      404: notMember,
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/integrations',
    operationId: 'createIntegration',
    tags: ['Integrations'],
    summary: 'Add a Slack, Discord or webhook integration',
    description:
      'Pro and Team plans. A webhook without a `secret` gets one generated by the server, returned once as `secret`; a secret is never returned otherwise (`has_secret` says whether one is set).',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, body: requests.createIntegration },
    responses: {
      200: json(
        'The integration; with `secret` only when the server generated it.',
        z.union([IntegrationResponse, IntegrationWithSecretResponse]),
      ),
      400: error('Validation failed (the reason names the field), or a secret for slack or discord.'),
      401: error('Missing or invalid admin token.'),
      402: integrationsPlan,
      403: projectRefused,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/integrations',
    operationId: 'listIntegrations',
    tags: ['Integrations'],
    summary: 'List a project’s integrations',
    description:
      'Oldest first, without secrets. Answers on every plan: integrations are kept after a downgrade to Free, and nothing is sent to them until the plan is Pro or Team again.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath },
    responses: {
      200: json('The integrations.', z.array(IntegrationResponse)),
      401: error('Missing or invalid admin token.'),
      403: projectRefused,
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'patch',
    path: '/projects/{id}/integrations/{integrationId}',
    operationId: 'updateIntegration',
    tags: ['Integrations'],
    summary: 'Change an integration',
    description: 'Pro and Team plans. Changes the fields sent and keeps the others; `kind` cannot be changed.',
    security: ADMIN_TOKEN,
    request: { params: ProjectIntegrationPath, body: requests.updateIntegration },
    responses: {
      200: json('The integration, without its secret.', IntegrationResponse),
      400: error('Validation failed (the reason names the field), `kind` sent, or a secret for slack or discord.'),
      401: error('Missing or invalid admin token.'),
      402: integrationsPlan,
      403: projectRefused,
      404: notIntegration,
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/projects/{id}/integrations/{integrationId}',
    operationId: 'deleteIntegration',
    tags: ['Integrations'],
    summary: 'Remove an integration',
    description: 'Allowed on every plan.',
    security: ADMIN_TOKEN,
    request: { params: ProjectIntegrationPath },
    responses: {
      200: json('The removed integration, without its secret.', IntegrationResponse),
      401: error('Missing or invalid admin token.'),
      403: projectRefused,
      404: notIntegration,
      default: defaultError,
    },
  });

  // Notifications (README "Notifications")

  const deliveryShape = ListDeliveriesQuery.shape;
  route({
    method: 'get',
    path: '/projects/{id}/deliveries',
    operationId: 'listDeliveries',
    tags: ['Notifications'],
    summary: 'List a project’s notification deliveries',
    description:
      'One row per notification and recipient (member, voter or submitter email; Slack, Discord or webhook integration), newest first. `status=failed` is the list an operator works through.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath,
      query: ListDeliveriesQuery.extend({
        status: describe(deliveryShape.status, 'Only deliveries in this status.'),
        limit: describe(deliveryShape.limit, 'Page size, 1 to 500 (default 50).'),
        offset: describe(deliveryShape.offset, 'Deliveries to skip (default 0).'),
      }),
    },
    responses: {
      200: json('The deliveries.', z.array(DeliveryResponse)),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });

  route({
    method: 'post',
    path: '/projects/{id}/deliveries/{deliveryId}/retry',
    operationId: 'retryDelivery',
    tags: ['Notifications'],
    summary: 'Retry a failed delivery',
    description:
      'Sets a failed delivery back to pending, due now, with a fresh budget of attempts (`attempts` restarts at 0; `last_error` stays until the next attempt). Same delivery id, so receivers can still tell a repeat.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath.extend({ deliveryId: describe(z.uuid(), 'Delivery id. A malformed id is a 404, like a missing one.') }),
    },
    responses: {
      200: json('The delivery, pending again.', DeliveryResponse),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      402: error('The account’s plan no longer includes the delivery’s channel: integrations need Pro or Team, emails Team.'),
      404: error('No such project, or no such delivery in it.'),
      409: error('The delivery is not failed (pending or delivered).'),
      default: defaultError,
    },
  });

  const unsubscribeToken = z.object({ token: describe(z.uuid(), 'The token of the link in the email.') });
  const unsubscribeNegotiation =
    ' No credentials: the token is the proof. A client that prefers `text/html` to JSON in `Accept` (a browser) gets a short HTML page, any other JSON.';
  route({
    method: 'get',
    path: '/unsubscribe/{token}',
    operationId: 'unsubscribeLink',
    tags: ['Notifications'],
    summary: 'What an unsubscribe link is for (the link in the email); changes nothing',
    description:
      'Read only, so that mail scanners and link prefetchers that open every link of a message unsubscribe nobody. Names the item and the address the link was sent to and whether that address still gets the item’s status-change emails; ' +
      'the HTML page has, while it does, a form with an Unsubscribe button that POSTs to this same URL.' +
      unsubscribeNegotiation,
    security: PUBLIC,
    request: { params: unsubscribeToken },
    responses: {
      200: {
        description: 'The link’s item and address. Not cached (`Cache-Control: no-store`).',
        content: {
          'application/json': { schema: UnsubscribeLinkResponse },
          'text/html': { schema: z.string().meta({ description: 'A confirmation page with a `<form method="post">` to this URL.' }) },
        },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
  });
  route({
    method: 'post',
    path: '/unsubscribe/{token}',
    operationId: 'unsubscribe',
    tags: ['Notifications'],
    summary: 'Unsubscribe from status-change emails (the page’s button, RFC 8058 one-click)',
    description:
      'Stops the status-change emails of one item to the address the link was sent to (as a voter or as the submitter). Idempotent. ' +
      'The target of the confirmation page’s form and of `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. The request body is not read: ' +
      'none, a form (`List-Unsubscribe=One-Click`, form-encoded or multipart) or anything else is accepted.' +
      unsubscribeNegotiation,
    security: PUBLIC,
    request: { params: unsubscribeToken },
    responses: {
      200: {
        description: 'Unsubscribed (also when it already was).',
        content: { 'application/json': { schema: UnsubscribeResponse }, 'text/html': { schema: z.string() } },
      },
      404: error('Unknown token.'),
      default: defaultError,
    },
  });

  // Outside /api/v1: health, this document and its rendering

  route({
    method: 'get',
    path: '/healthz',
    operationId: 'liveness',
    tags: ['Service'],
    summary: 'Liveness',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: { 200: json('The process runs.', HealthResponse) },
  });

  route({
    method: 'get',
    path: '/readyz',
    operationId: 'readiness',
    tags: ['Service'],
    summary: 'Readiness of each dependency',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: {
      200: json('Every dependency answers.', ReadinessResponse),
      503: json('A dependency is unavailable (`"unavailable"`).', ReadinessResponse),
    },
  });

  route({
    method: 'get',
    path: '/openapi/openapi.yaml',
    operationId: 'openapiDocument',
    tags: ['Service'],
    summary: 'This OpenAPI document',
    description: 'Served at /openapi/openapi.yaml and at /api/v1/openapi/openapi.yaml.',
    servers: [{ url: '/', description: ROOT_SERVER[0]?.description ?? '' }, API_SERVER],
    security: PUBLIC,
    responses: { 200: { description: 'OpenAPI 3.0 document, YAML.', content: { 'application/yaml': { schema: z.string() } } } },
  });

  route({
    method: 'get',
    path: '/docs',
    operationId: 'docsPage',
    tags: ['Service'],
    summary: 'Rendered API documentation (Swagger UI)',
    description: 'Served entirely by this service (no CDN).',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: { 200: { description: 'HTML page.', content: { 'text/html': { schema: z.string() } } } },
  });

  route({
    method: 'get',
    path: '/docs/{asset}',
    operationId: 'docsAsset',
    tags: ['Service'],
    summary: 'A static asset of the docs page',
    servers: ROOT_SERVER,
    security: PUBLIC,
    request: { params: z.object({ asset: describe(z.enum(DOCS_ASSETS), 'File name.') }) },
    responses: {
      200: {
        description: 'The asset (JavaScript or CSS).',
        content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
      },
      404: error('No such asset.'),
    },
  });
}

const DESCRIPTION = `
Multi-project feedback and product-analytics service: client apps submit feedback, vote and
comment, register their users and track analytics events; project owners manage feedback and
read metrics.

**Field names.** Response bodies use snake_case, exactly as the schemas below. Request bodies
accept camelCase or snake_case: the schemas give the camelCase spelling, and \`user_id\` is read as
\`userId\` (when both are sent, the camelCase one wins). Query parameters are read verbatim, with
no casing conversion (\`includeMerged\`, \`date_from\`).

**Credentials.** Project API key in \`X-API-Key\` (the client app's operations), the account's
admin token, the owner's or a team member's, as \`Authorization: Bearer\` (\`/projects…\`), the operator token as
\`Authorization: Bearer\` (\`/admin/…\`).

**Errors.** Two bodies: the server-wide \`{ "error": true, "reason": "…" }\` (authentication,
authorization, validation of the non-metrics operations, 404, 409, 413, 500, 503) and the metrics
API's \`{ "error": { "code": "METRICS_…", "message": "…" } }\` (its 400s, 402 and the admin-only
measure 403). Clients tell them apart by the type of \`error\`. Unknown routes are 404 in the
server-wide body.

Every response carries \`X-Request-Id\` (the caller's, when it sent a sane one).
`.trim();

/** Builds the document. Pure: the same every time, so callers may cache it. */
export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  register(registry);
  const document = new OpenApiGeneratorV3(registry.definitions, { sortComponents: 'alphabetically' }).generateDocument({
    openapi: OPENAPI_VERSION,
    info: { title: 'Feedback service API', version: API_VERSION, description: DESCRIPTION },
    servers: [API_SERVER],
    tags: [
      { name: 'Feedback', description: 'Feedback items (X-API-Key)' },
      { name: 'Votes', description: 'Votes on feedback (X-API-Key)' },
      { name: 'Comments', description: 'Comments on feedback (X-API-Key)' },
      { name: 'SDK users', description: 'Users of the client app (X-API-Key)' },
      { name: 'Events', description: 'Analytics event ingestion (X-API-Key)' },
      { name: 'Metrics', description: 'Metrics on two surfaces: X-API-Key, or the admin token with the SDK-user and revenue measures' },
      { name: 'Projects', description: 'Projects of the admin token’s account' },
      { name: 'Team members', description: 'Team members of a project and their admin tokens (Team plan)' },
      { name: 'Integrations', description: 'Slack, Discord and signed webhook integrations of a project (Pro and Team plans)' },
      { name: 'Notifications', description: 'Delivery of notifications (emails, Slack, Discord, webhooks) and unsubscribing' },
      { name: 'Operator', description: 'Accounts, plans, suspension and ad-hoc SQL (operator token)' },
      { name: 'Service', description: 'Health, this document and its rendering (no authentication)' },
    ],
  });
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, { parameters?: unknown[] }>)) {
      for (const parameter of operation.parameters ?? []) normalizeParameter(parameter);
    }
  }
  return document;
}

/**
 * Parameters are strings on the wire and never null: the generator marks a coercing number
 * (`z.coerce`) nullable because `null` coerces, and gives a transformed parameter's default after
 * its transform; neither describes what a client sends.
 */
function normalizeParameter(parameter: unknown) {
  const schema = (parameter as { schema?: Record<string, unknown> }).schema;
  if (!schema) return;
  delete schema.nullable;
  if (schema.type === 'string' && schema.default !== undefined && typeof schema.default !== 'string') {
    schema.default = String(schema.default);
  }
}

/** The document as YAML, the format served at /openapi/openapi.yaml. */
export function openApiYaml(): string {
  return stringify(buildOpenApiDocument(), { aliasDuplicateObjects: false, lineWidth: 0 });
}
