import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { EXPORT_FORMATS } from '../../olap/data-rights/exports.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { CommentResponse, FeedbackResponse } from '../feedback/feedback.responses.js';
import { error, json } from '../openapi/building-blocks.js';
import { ErasureResponse, ProjectDeletionResponse } from './data-rights.responses.js';
import { TABLE_EXPORT_FORMATS } from './exports.schema.js';

/*
 * The OpenAPI entries of the data-rights routes (docs/data-rights.md): exports, erasure, owner
 * deletions and the operator's account tools. Registered from openapi.ts; the same conventions
 * (server-wide error body, a 429 on every limited route, descriptions on the parameters).
 */

const param = <S extends z.ZodType>(schema: S, description: string): S => schema.meta({ param: { description } });

const ADMIN_TOKEN = [{ AdminToken: [] }];

const defaultError = error(
  'Any other failure, in the server-wide error body: 405 with `Allow`, 500, 503 with `Retry-After` while the service shuts down.',
);
const tooManyRequests = {
  ...error('Rate limit exceeded (the budget of the token). Limited responses of every status carry the RateLimit-* headers.'),
  headers: { 'Retry-After': { description: 'Seconds until the budget allows a request again.', schema: { type: 'integer' as const } } },
};
const unauthorized = error('Missing or invalid admin token.');
const noProject = error('No such project.');
const otherAccount = error('The project belongs to another account, or is suspended.');

const projectId = param(z.uuid(), 'Project id. 404 when no such project exists, 403 when it belongs to another account.');
const ProjectPath = z.object({ id: projectId });

const exportHeaders = {
  'Content-Disposition': { description: '`attachment; filename="…"`.', schema: { type: 'string' as const } },
};

const textExport = (what: string) => ({
  description: `${what}, streamed as it is read (bounded memory on the server).`,
  headers: exportHeaders,
  content: {
    'text/csv': { schema: z.string().meta({ description: 'RFC 4180 CSV, a header line first, CRLF line ends; null is an empty field.' }) },
    'application/x-ndjson': {
      schema: z.string().meta({ description: 'JSON Lines: one JSON object per line, the same fields as the CSV columns.' }),
    },
  },
});

const formatParam = (formats: readonly string[], fallback: string) =>
  param(
    z
      .enum(formats as [string, ...string[]])
      .optional()
      .meta({ default: fallback }),
    `Output format: ${formats.map((f) => `\`${f}\``).join(', ')}. Default \`${fallback}\`.`,
  );

const echoHeader = (description: string, schema: { type: 'string' | 'integer' | 'boolean'; enum?: string[] }) => ({
  description,
  schema,
  required: true,
});

/** Registers every data-rights route; `registry` is the one openapi.ts builds the document from. */
export function registerDataTeamsPaths(registry: OpenAPIRegistry): void {
  const route = (config: RouteConfig) => registry.registerPath({ ...config, responses: { ...config.responses, 429: tooManyRequests } });

  // Exports

  route({
    method: 'get',
    path: '/projects/{id}/exports/events',
    operationId: 'exportEvents',
    tags: ['Data rights'],
    summary: 'Export the project’s events (CSV, JSON Lines or Parquet)',
    description:
      'Every event of the window, oldest first, with `id`, `event_name`, `user_id`, `properties` (the JSON text sent; CSV: empty, JSON Lines and Parquet: null when none) and `created_at` ' +
      '(CSV and JSON Lines: ISO 8601 UTC; Parquet: a UTC timestamp in milliseconds). The window and event scope are those of the metrics (SPEC 2.8, 8.3): the window is narrowed to the plan’s ' +
      `allowance, and below Pro only the predefined events (${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')}) are exported; the response headers say what applied. ` +
      'Streamed with bounded memory; a client that disconnects stops the query.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath,
      query: z.object({
        format: formatParam(EXPORT_FORMATS, 'csv'),
        date_from: param(
          z.iso.date().optional(),
          'First day, `YYYY-MM-DD`, UTC, inclusive. Default: 29 days before `date_to`. Narrowed to the plan’s window.',
        ),
        date_to: param(z.iso.date().optional(), 'Last day, `YYYY-MM-DD`, UTC, inclusive. Default: today.'),
      }),
    },
    responses: {
      200: {
        description: 'The events, streamed.',
        headers: {
          ...exportHeaders,
          'X-Event-Scope': echoHeader('`all`, or `predefined_only` when the plan cannot read custom event names.', {
            type: 'string',
            enum: ['all', 'predefined_only'],
          }),
          'X-Date-From': echoHeader('First day of the window applied.', { type: 'string' }),
          'X-Date-To': echoHeader('Last day of the window applied.', { type: 'string' }),
          'X-Retention-Clamped': echoHeader('`true` when the plan narrowed the requested window.', { type: 'boolean' }),
          'X-Retention-Window-Days': echoHeader('The plan’s window in days.', { type: 'integer' }),
        },
        content: {
          'text/csv': { schema: z.string().meta({ description: 'CSV with a header line (ClickHouse CSVWithNames).' }) },
          'application/x-ndjson': { schema: z.string().meta({ description: 'One JSON object per line (ClickHouse JSONEachRow).' }) },
          'application/vnd.apache.parquet': { schema: z.string().meta({ format: 'binary', description: 'One Parquet file.' }) },
        },
      },
      400: error('An invalid `format`, date or range (the reason names it), or a parameter given twice.'),
      401: unauthorized,
      403: otherAccount,
      404: noProject,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/exports/feedbacks',
    operationId: 'exportFeedbacks',
    tags: ['Data rights'],
    summary: 'Export the project’s feedback items (CSV or JSON Lines)',
    description:
      'Every item, merged ones too, oldest first: `id`, `title`, `description`, `status`, `category`, `user_id`, `user_email`, `vote_count`, `total_mrr`, `comment_count`, ' +
      '`merged_into_id`, `merged_at`, `rejection_reason`, `created_at`, `updated_at` (times ISO 8601 UTC with microseconds). Read through a PostgreSQL cursor.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: z.object({ format: formatParam(TABLE_EXPORT_FORMATS, 'csv') }) },
    responses: {
      200: textExport('The feedback items'),
      400: error('An invalid `format`.'),
      401: unauthorized,
      403: otherAccount,
      404: noProject,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/exports/users',
    operationId: 'exportSdkUsers',
    tags: ['Data rights'],
    summary: 'Export the project’s SDK users (CSV or JSON Lines)',
    description:
      'Every SDK user, first registered first: `id`, `user_id`, `mrr`, `first_seen_at`, `last_seen_at`. Read through a PostgreSQL cursor.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: z.object({ format: formatParam(TABLE_EXPORT_FORMATS, 'csv') }) },
    responses: {
      200: textExport('The SDK users'),
      400: error('An invalid `format`.'),
      401: unauthorized,
      403: otherAccount,
      404: noProject,
      default: defaultError,
    },
  });

  // Erasure (GDPR Art. 17)

  const erasureLocation = {
    Location: { description: 'The erasure’s URL (GET it to follow the job).', schema: { type: 'string' as const } },
  };
  route({
    method: 'delete',
    path: '/projects/{id}/users/{userId}',
    operationId: 'eraseSdkUser',
    tags: ['Data rights'],
    summary: 'Erase an SDK user’s data (GDPR Art. 17)',
    description:
      'Records a durable erasure job and answers at once. The job deletes the SDK user and their votes (vote counts and `total_mrr` follow), deletes the emails sent to them as voter ' +
      'or submitter and their address from notification snapshots, anonymizes their feedback items and comments (kept on the board, attributed to a random id), then deletes their events ' +
      'and facts in ClickHouse and rebuilds the rollups of the days that held their events. It survives restarts and is safe to run twice. Asking again while one is open answers the open one. ' +
      'Also allowed for a suspended project.',
    security: ADMIN_TOKEN,
    request: {
      params: z.object({
        id: projectId,
        userId: param(
          z.string().min(1).max(255),
          'The client app’s user id (URL-encoded). A user unknown to PostgreSQL may still have events: the job runs anyway.',
        ),
      }),
    },
    responses: {
      202: { ...json('The erasure job.', ErasureResponse), headers: erasureLocation },
      400: error('A user id longer than 255 characters.'),
      401: unauthorized,
      403: error('The project belongs to another account.'),
      404: noProject,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/{id}/erasures/{erasureId}',
    operationId: 'getErasure',
    tags: ['Data rights'],
    summary: 'Follow an erasure',
    security: ADMIN_TOKEN,
    request: {
      params: z.object({ id: projectId, erasureId: param(z.uuid(), 'Erasure id. A malformed id is a 404, like a missing one.') }),
    },
    responses: {
      200: json('The erasure job.', ErasureResponse),
      401: unauthorized,
      403: error('The project belongs to another account.'),
      404: error('No such project, or no such erasure in it.'),
      default: defaultError,
    },
  });

  // Owner deletions

  const feedbackId = param(z.uuid(), 'Feedback id. A malformed id is a 404, like a missing one.');
  route({
    method: 'delete',
    path: '/projects/{id}/feedbacks/{feedbackId}',
    operationId: 'deleteFeedback',
    tags: ['Data rights'],
    summary: 'Delete a feedback item with its votes and comments',
    description:
      'Deletes the item, its votes and its comments, and the items merged into it (their votes had moved to it). Metrics history in ClickHouse (facts) is kept: it records what happened.',
    security: ADMIN_TOKEN,
    request: { params: z.object({ id: projectId, feedbackId }) },
    responses: {
      200: json('The deleted item, as it was.', FeedbackResponse),
      401: unauthorized,
      403: otherAccount,
      404: error('No such project, or no such feedback in it.'),
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/projects/{id}/feedbacks/{feedbackId}/comments/{commentId}',
    operationId: 'deleteComment',
    tags: ['Data rights'],
    summary: 'Delete a comment (moderation)',
    description: 'The item’s `comment_count` follows.',
    security: ADMIN_TOKEN,
    request: { params: z.object({ id: projectId, feedbackId, commentId: param(z.uuid(), 'Comment id. A malformed id is a 404.') }) },
    responses: {
      200: json('The deleted comment.', CommentResponse),
      401: unauthorized,
      403: otherAccount,
      404: error('No such project, feedback or comment (of that item).'),
      default: defaultError,
    },
  });

  route({
    method: 'delete',
    path: '/projects/{id}',
    operationId: 'deleteProject',
    tags: ['Data rights'],
    summary: 'Delete a project with all its data',
    description:
      'Deletes the project and everything of it in PostgreSQL at once (feedback, votes, comments, SDK users, members and their tokens, integrations, notifications, deliveries); ' +
      'its API key stops working. Its events, facts and rollups in ClickHouse are deleted by a durable job, answered here (follow it at `/projects/deletions/{deletionId}`). ' +
      'The owner’s token only (a team member gets 403). Also allowed for a suspended project.',
    security: ADMIN_TOKEN,
    request: {
      params: ProjectPath,
      query: z.object({ confirm: param(z.string().min(1), 'The project’s name, exactly: a typed confirmation. Required.') }),
    },
    responses: {
      202: {
        ...json('The deletion job.', ProjectDeletionResponse),
        headers: { Location: { description: 'The job’s URL.', schema: { type: 'string' as const } } },
      },
      400: error('`confirm` missing or not the project’s name.'),
      401: unauthorized,
      403: error('The project belongs to another account, or a team member’s token.'),
      404: noProject,
      default: defaultError,
    },
  });

  route({
    method: 'get',
    path: '/projects/deletions/{deletionId}',
    operationId: 'getProjectDeletion',
    tags: ['Data rights'],
    summary: 'Follow a project deletion',
    security: ADMIN_TOKEN,
    request: { params: z.object({ deletionId: param(z.uuid(), 'Deletion id. 404 for a malformed id and for one of another account.') }) },
    responses: {
      200: json('The deletion job.', ProjectDeletionResponse),
      401: unauthorized,
      404: error('No such deletion of this account’s projects.'),
      default: defaultError,
    },
  });
}
