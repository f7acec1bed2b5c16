import { hash, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { hashSecret, newSecret } from '../../core/secrets.js';
import { ProjectQueryBusy, ProjectQueryRefused } from '../../olap/readonly/project-query.js';
import type { ReadonlyAnswer } from '../../olap/readonly/readonly-query.js';
import {
  deleteEndpoint,
  type EndpointForCall,
  type EndpointRow,
  findEndpointOfQuery,
  listEndpointCalls,
  publishEndpoint,
  rotateEndpointToken,
} from '../../oltp/saved-query-endpoints.repo.js';
import { API_PREFIX } from '../api-prefix.js';
import { allowedOrigins } from '../cors/allowed-origins.schema.js';
import { defineRoute, perApp, type RouteDeps } from '../define-route.js';
import { AppError, badRequest, forbidden, notFound, unauthorized } from '../errors.js';
import { anyValues } from '../shared/any-values.js';
import { body, defaultError, describe, error, json, projectId } from '../shared/building-blocks.js';
import { projectQueries } from '../shared/project-queries.js';
import { projectSqlScope } from '../shared/project-sql-scope.js';
import type { RequestContext } from '../state.js';
import { bodySchema } from '../validation.js';
import { cacheKey, createEndpointCache } from './endpoint-cache.js';
import { createEndpointCallLog } from './endpoint-calls.js';
import { type EndpointParam, PARAM_VALUE_MAX_BYTES, paramsOf, valueProblem } from './endpoint-params.js';

/*
 * A saved query published as an HTTP endpoint (issue 39, docs/project-sql.md "Endpoints"): the
 * project's admin publishes it with defaults for its `{name:Type}` parameters, a cache time and
 * the origins whose pages may call it; anyone with its read token calls GET /api/v1/q/:id, which
 * runs the query as POST /projects/:id/sql does (the same lane, isolation, plan window and limits).
 */

/** Prefix of an endpoint's read token: recognisable when leaked, like the other secrets. */
export const ENDPOINT_TOKEN_PREFIX = 'fbq_';
export const MAX_CACHE_SECONDS = 3600;
const CALLS_LISTED = 50;

const TAGS = ['Query endpoints'];

/** Answers kept by endpoint, one cache per app (in this process). */
const endpointCache = perApp(() => createEndpointCache());
/** The call log, written after the answers (endpoint-calls.ts). */
const callLog = perApp(({ sql, logger }) => createEndpointCallLog(sql, logger));

const QueryPath = z.object({
  id: projectId,
  queryId: describe(
    z.uuid({ error: 'saved query not found' }),
    'Saved query id. 404 when the project has no such saved query (a malformed id too).',
  ),
});

const paramValue = z.union([z.string(), z.number(), z.boolean()], { error: 'must be a string, number or boolean' });

export const PublishEndpointBody = bodySchema({
  defaults: z.record(z.string(), paramValue, { error: 'must be an object of parameter values by name' }).optional().meta({
    description: 'A default value per `{name:Type}` parameter of the query, by name; a parameter without one must be given on every call.',
  }),
  cacheSeconds: z
    .number({ error: `must be an integer from 0 to ${MAX_CACHE_SECONDS}` })
    .int(`must be an integer from 0 to ${MAX_CACHE_SECONDS}`)
    .min(0, `must be an integer from 0 to ${MAX_CACHE_SECONDS}`)
    .max(MAX_CACHE_SECONDS, `must be an integer from 0 to ${MAX_CACHE_SECONDS}`)
    .optional()
    .meta({ description: 'Seconds an answer is served again for the same parameter values, without the engine (0, the default: never).' }),
  corsOrigins: allowedOrigins
    .optional()
    .meta({ description: 'Exact browser origins (as `allowed_origins`) whose pages may call the endpoint; empty (the default): none.' }),
});

const EndpointParamInfo = z.object({
  name: z.string(),
  type: z.string().meta({ description: 'The ClickHouse type written in the query.' }),
  default: z.string().nullable().meta({ description: 'The default value; null when the parameter must be given.' }),
});

const EndpointResponse = z
  .object({
    id: z.uuid(),
    saved_query_id: z.uuid(),
    url: z.string().meta({ description: 'GET this URL with `Authorization: Bearer <token>`; add `.csv` or `.ndjson` for those formats.' }),
    params: z.array(EndpointParamInfo),
    cache_seconds: z.number().int(),
    cors_origins: z.array(z.string()),
    created_at: z.string(),
    token_made_at: z.string(),
  })
  .meta({ id: 'QueryEndpoint' });

const NewEndpointResponse = EndpointResponse.extend({
  token: z.string().meta({ description: 'The read token, shown only here (it is stored as a hash).' }),
}).meta({ id: 'NewQueryEndpoint' });

const EndpointCall = z.object({
  called_at: z.string(),
  status: z.number().int(),
  duration_ms: z.number(),
  rows: z.number().int().nullable(),
  cached: z.boolean(),
  format: z.enum(['json', 'csv', 'ndjson']),
});

const EndpointAnswer = z
  .object({
    meta: z.array(z.object({ name: z.string(), type: z.string() })),
    data: z.array(z.record(z.string(), z.unknown()).meta(anyValues)),
    rows: z.number().int(),
    rows_truncated: z.boolean().meta({ description: 'True when the query had more rows than the limit (10,000) and was cut.' }),
    statistics: z.object({ elapsed: z.number().meta({ description: 'Seconds.' }), cached: z.boolean() }),
  })
  .meta({ id: 'QueryEndpointAnswer' });

const whole = (at: Date) => `${at.toISOString().slice(0, 19)}Z`;

function presentEndpoint(row: EndpointRow, sqlText: string | undefined, publicUrl: string) {
  const params = sqlText === undefined ? [] : paramsOf(sqlText);
  return {
    id: row.id,
    saved_query_id: row.saved_query_id,
    url: `${publicUrl.replace(/\/+$/, '')}${API_PREFIX}/q/${row.id}`,
    params: Array.isArray(params) ? params.map((p) => ({ ...p, default: row.defaults[p.name] ?? null })) : [],
    cache_seconds: row.cache_seconds,
    cors_origins: row.cors_origins,
    created_at: whole(row.created_at),
    token_made_at: whole(row.token_made_at),
  };
}

const common = (what: string) => ({
  401: error('Missing or invalid admin token (a member’s token needs the Team plan).'),
  404: error(`No such project or saved query${what}.`),
  default: defaultError,
});

async function savedQueryText(deps: RouteDeps, projectId: string, queryId: string): Promise<string | null> {
  const [row] = await deps.sql<{ sql: string }[]>`select sql from saved_queries where id = ${queryId} and project_id = ${projectId}`;
  return row?.sql ?? null;
}

/** The query's parameters, or a 400 naming the one written with two types. */
function paramsOrRefuse(text: string): EndpointParam[] {
  const params = paramsOf(text);
  if (!Array.isArray(params)) throw badRequest(`the query uses the parameter ${params.conflict} with two types`);
  return params;
}

export const endpointRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/saved-queries/:queryId/endpoint',
    auth: 'projectAdmin',
    operationId: 'publishSavedQuery',
    tags: TAGS,
    summary: 'Publish a saved query as an HTTP endpoint',
    description:
      'The query’s `{name:Type}` parameters become query parameters of `GET /q/{endpointId}`, checked against their types; `defaults` gives a value for those a call may leave out. ' +
      'The answer holds the endpoint’s read token, shown only here. Publishing an already published query keeps its id and URL, replaces its settings, issues a new token (the old one stops working) and drops its cached answers.',
    params: QueryPath,
    body: body(PublishEndpointBody, 'PublishEndpointRequest'),
    responses: {
      200: json('The endpoint, with its read token (shown only here).', NewEndpointResponse),
      400: error(
        'Validation failed: the reason names the field or the parameter (a default of a parameter the query does not have, or of the wrong type).',
      ),
      ...common(''),
    },
    handler: async (ctx, deps, { project, params, body: input }) => {
      const text = await savedQueryText(deps, project.id, params.queryId);
      if (text === null) throw notFound('saved query not found');
      const declared = paramsOrRefuse(text);
      const defaults: Record<string, string> = {};
      for (const [name, value] of Object.entries(input.defaults ?? {})) {
        const param = declared.find((p) => p.name === name);
        if (!param) throw badRequest(`defaults.${name}: the query has no parameter ${name}`);
        const problem = valueProblem(param.type, String(value));
        if (problem) throw badRequest(`defaults.${name}: ${problem}`);
        defaults[name] = String(value);
      }
      const token = newSecret(ENDPOINT_TOKEN_PREFIX);
      const row = await publishEndpoint(deps.sql, {
        projectId: project.id,
        savedQueryId: params.queryId,
        tokenHash: hashSecret(token),
        defaults,
        cacheSeconds: input.cacheSeconds ?? 0,
        corsOrigins: input.corsOrigins ?? [],
      });
      if (!row) throw notFound('saved query not found');
      deps.endpointLookups.forget(row.id);
      endpointCache(deps).dropEndpoint(row.id);
      ctx.body = { ...presentEndpoint(row, text, deps.config.delivery.publicUrl), token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/saved-queries/:queryId/endpoint',
    auth: 'projectAdmin',
    operationId: 'getSavedQueryEndpoint',
    tags: TAGS,
    summary: 'The endpoint of a published saved query',
    description: 'Without its token (shown only when it is made).',
    params: QueryPath,
    responses: { 200: json('The endpoint.', EndpointResponse), ...common(', or it is not published') },
    handler: async (ctx, deps, { project, params }) => {
      const row = await findEndpointOfQuery(deps.sql, project.id, params.queryId);
      if (!row) throw notFound('the saved query is not published');
      ctx.body = presentEndpoint(
        row,
        (await savedQueryText(deps, project.id, params.queryId)) ?? undefined,
        deps.config.delivery.publicUrl,
      );
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/saved-queries/:queryId/endpoint',
    auth: 'projectAdmin',
    operationId: 'unpublishSavedQuery',
    tags: TAGS,
    summary: 'Unpublish a saved query',
    description: 'Its URL answers 404 from the next call on; its cached answers are dropped. The saved query stays.',
    params: QueryPath,
    responses: {
      200: json('Unpublished.', z.object({ id: z.uuid(), deleted: z.literal(true) })),
      ...common(', or it is not published'),
    },
    handler: async (ctx, deps, { project, params }) => {
      const row = await deleteEndpoint(deps.sql, project.id, params.queryId);
      if (!row) throw notFound('the saved query is not published');
      deps.endpointLookups.forget(row.id);
      endpointCache(deps).dropEndpoint(row.id);
      ctx.body = { id: row.id, deleted: true };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/saved-queries/:queryId/endpoint/token',
    auth: 'projectAdmin',
    operationId: 'rotateSavedQueryEndpointToken',
    tags: TAGS,
    summary: 'A new read token for a published saved query',
    description: 'No body. The old token is refused (401) from the next call on; the new one is shown only here.',
    params: QueryPath,
    responses: { 200: json('The endpoint, with its new token.', NewEndpointResponse), ...common(', or it is not published') },
    handler: async (ctx, deps, { project, params }) => {
      const token = newSecret(ENDPOINT_TOKEN_PREFIX);
      const row = await rotateEndpointToken(deps.sql, project.id, params.queryId, hashSecret(token));
      if (!row) throw notFound('the saved query is not published');
      deps.endpointLookups.forget(row.id);
      const text = (await savedQueryText(deps, project.id, params.queryId)) ?? undefined;
      ctx.body = { ...presentEndpoint(row, text, deps.config.delivery.publicUrl), token };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/saved-queries/:queryId/endpoint/calls',
    auth: 'projectAdmin',
    operationId: 'listSavedQueryEndpointCalls',
    tags: TAGS,
    summary: 'The latest calls of a published saved query',
    description: `Newest first, at most ${CALLS_LISTED}: when, the status, the time, the rows answered and whether the cache answered. Parameter values are not kept.`,
    params: QueryPath,
    responses: { 200: json('The calls.', z.array(EndpointCall)), ...common(', or it is not published') },
    handler: async (ctx, deps, { project, params }) => {
      const row = await findEndpointOfQuery(deps.sql, project.id, params.queryId);
      if (!row) throw notFound('the saved query is not published');
      ctx.body = (await listEndpointCalls(deps.sql, row.id, CALLS_LISTED)).map((call) => ({
        ...call,
        called_at: call.called_at.toISOString(),
      }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/q/:endpoint',
    auth: 'public',
    operationId: 'callQueryEndpoint',
    tags: TAGS,
    summary: 'Call a published saved query',
    description:
      'With `Authorization: Bearer <token>` (the endpoint’s read token). The query parameters are the saved query’s `{name:Type}` parameters by name, each checked against its type; a parameter with a default may be left out. ' +
      'The query runs as `POST /projects/{id}/sql` runs it: only the project’s rows, within the plan’s window (ending today) and event scope, at most 10,000 rows, with the same time, memory and concurrency limits. ' +
      '`/q/{id}` answers JSON (`meta`, `data`, `rows`, `statistics`), `/q/{id}.csv` CSV with a header line, `/q/{id}.ndjson` one JSON object per line. ' +
      'Each token has the API’s request budget (API_RATE_LIMIT). A page may call it only from an origin listed in the endpoint’s `cors_origins` (the exact-origins rule of `allowed_origins`); another Origin is a 403. ' +
      'With a cache time, an answer is served again for the same parameter values (every one of them is part of the key) until it expires, without the engine; republishing drops it.',
    params: z.object({
      endpoint: describe(
        z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(\.(json|csv|ndjson))?$/, 'endpoint not found'),
        'The endpoint id, optionally with `.csv`, `.ndjson` or `.json`. 404 when there is no such endpoint (unpublished, or malformed).',
      ),
    }),
    responses: {
      200: {
        description: 'The query’s answer.',
        content: {
          'application/json': { schema: EndpointAnswer },
          'text/csv': { schema: z.string() },
          'application/x-ndjson': { schema: z.string() },
        },
      },
      400: error(
        'A parameter is missing, given twice, unknown or not of its type (the reason names it), or the query was refused or failed in the engine (`query: …`).',
      ),
      401: error('Missing or invalid endpoint token.'),
      403: error('The Origin is not in the endpoint’s cors_origins, or the project is suspended.'),
      404: error('No such endpoint: never published, unpublished, or a malformed id.'),
      429: error('The token’s request budget is spent, or the account runs too many queries at once (Retry-After).'),
      default: defaultError,
    },
    handler: async (ctx, deps, { params }) => {
      const [id = '', suffix] = params.endpoint.split('.');
      await callEndpoint(ctx, deps, id, suffix === 'csv' || suffix === 'ndjson' ? suffix : 'json');
    },
  }),
];

type Format = 'json' | 'csv' | 'ndjson';

async function callEndpoint(ctx: RequestContext, deps: RouteDeps, id: string, format: Format): Promise<void> {
  const started = performance.now();
  // Remembered in process, dropped on any change (oltp/saved-query-endpoints.cache.ts): a cached answer costs no PostgreSQL round trip.
  const endpoint = await deps.endpointLookups.lookup(id);
  if (!endpoint) throw notFound('endpoint not found');
  let rows: number | null = null;
  let cached = false;
  let status = 200;
  try {
    allowOrigin(ctx, endpoint);
    checkToken(ctx, endpoint);
    const charge = await deps.rateLimits.api?.consume(`query-endpoint:${endpoint.id}:${endpoint.token_made_at.getTime()}`);
    if (charge && !charge.allowed) {
      const retry = Math.max(1, Math.ceil(charge.msBeforeReset / 1000));
      throw new AppError(
        429,
        `too many requests: this endpoint token is over its budget (${deps.rateLimits.api?.describe()}); retry in ${retry} s`,
        {
          'Retry-After': String(retry),
        },
      );
    }
    if (endpoint.suspended) throw forbidden('the project is suspended');
    const values = callValues(ctx, endpoint);
    const { scope, echo } = projectSqlScope({ id: endpoint.project_id, plan: endpoint.plan }, {});
    const cache = endpointCache(deps);
    // Everything the answer depends on: the query's text, the window, the event scope and every value.
    const key = cacheKey(endpoint.id, [
      hash('sha256', endpoint.sql, 'base64'),
      echo.date_from,
      echo.date_to,
      echo.event_scope,
      Object.entries(values).sort(([a], [b]) => (a < b ? -1 : 1)),
    ]);
    let answer = endpoint.cache_seconds > 0 ? cache.get(key) : undefined;
    cached = answer !== undefined;
    if (!answer) {
      try {
        answer = await projectQueries(deps).run(endpoint.account_id, scope, endpoint.sql, values);
      } catch (error) {
        if (error instanceof ProjectQueryRefused) throw badRequest(`query: ${error.message}`);
        if (error instanceof ProjectQueryBusy)
          throw new AppError(429, `query: ${error.message}`, { 'Retry-After': String(error.retryAfterSeconds) });
        throw error;
      }
      cache.set(key, answer, endpoint.cache_seconds);
    }
    rows = answer.row_count;
    answerIn(ctx, format, answer, cached, (performance.now() - started) / 1000);
  } catch (error) {
    status = error instanceof AppError ? error.status : 500;
    throw error;
  } finally {
    const duration = Math.round((performance.now() - started) * 10) / 10;
    callLog(deps).add({ endpoint_id: endpoint.id, called_at: new Date(), status, duration_ms: duration, rows, cached, format });
  }
}

/** CORS of one endpoint: its listed origins only, each answered as itself; any other Origin is refused. */
function allowOrigin(ctx: RequestContext, endpoint: EndpointForCall): void {
  const origin = ctx.req.headers.origin;
  ctx.vary('Origin');
  if (origin === undefined) return;
  if (!endpoint.cors_origins.includes(origin)) throw forbidden(`origin ${origin} is not allowed for this endpoint (cors_origins)`);
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Expose-Headers', 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset');
}

function checkToken(ctx: RequestContext, endpoint: EndpointForCall): void {
  const given = /^Bearer (\S+)$/.exec(ctx.get('authorization'))?.[1];
  if (given === undefined) throw unauthorized('missing endpoint token: send Authorization: Bearer <token>');
  if (!timingSafeEqual(hashSecret(given), endpoint.token_hash)) throw unauthorized('invalid endpoint token');
}

/** The value of each parameter: the call's, else its default; 400 naming one that is missing, doubled, unknown or mistyped. */
function callValues(ctx: RequestContext, endpoint: EndpointForCall): Record<string, string> {
  const declared = paramsOrRefuse(endpoint.sql);
  const given = ctx.query;
  for (const name of Object.keys(given)) {
    if (!declared.some((p) => p.name === name)) throw badRequest(`${name}: the query has no parameter ${name}`);
  }
  const values: Record<string, string> = {};
  for (const param of declared) {
    const raw = given[param.name];
    if (Array.isArray(raw)) throw badRequest(`${param.name}: given more than once`);
    const value = raw ?? endpoint.defaults[param.name];
    if (value === undefined) throw badRequest(`${param.name}: is required (${param.type})`);
    if (Buffer.byteLength(value) > PARAM_VALUE_MAX_BYTES) throw badRequest(`${param.name}: must be at most 256 KiB`);
    const problem = valueProblem(param.type, value);
    if (problem) throw badRequest(`${param.name}: ${problem}`);
    values[param.name] = value;
  }
  return values;
}

function answerIn(ctx: RequestContext, format: Format, answer: ReadonlyAnswer, cached: boolean, elapsedSeconds: number): void {
  if (format === 'json') {
    const head = Buffer.from(`{"meta":${JSON.stringify(answer.columns)},"data":`);
    const tail = Buffer.from(
      `,"rows":${answer.row_count},"rows_truncated":${answer.truncated},"statistics":${JSON.stringify({ elapsed: Math.round(elapsedSeconds * 1e6) / 1e6, cached })}}`,
    );
    ctx.body = Buffer.concat([head, answer.rows_json, tail]);
    ctx.type = 'application/json; charset=utf-8';
    return;
  }
  const rows = JSON.parse(answer.rows_json.toString('utf8')) as Record<string, unknown>[];
  if (format === 'ndjson') {
    ctx.body = rows.map((row) => `${JSON.stringify(row)}\n`).join('');
    ctx.type = 'application/x-ndjson; charset=utf-8';
    return;
  }
  const names = answer.columns.map((column) => column.name);
  const lines = [names.map(csvField).join(','), ...rows.map((row) => names.map((name) => csvField(row[name])).join(','))];
  ctx.body = `${lines.join('\r\n')}\r\n`;
  ctx.type = 'text/csv; charset=utf-8; header=present';
}

/** RFC 4180: a field with a quote, comma or line break is quoted, its quotes doubled; null is empty; arrays and objects as JSON. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
