import { z } from 'zod';
import { eventProperties } from '../../olap/metrics/event-properties.js';
import { eventsFeed } from '../../olap/metrics/events-feed.js';
import { MetricsError, type MetricsErrorCode } from '../../olap/metrics/metrics.errors.js';
import * as metrics from '../../olap/metrics/metrics.planner.js';
import { keyProject } from '../auth.js';
import { defineRoute, type RouteDefinition } from '../define-route.js';
import { defaultError, error, json, ProjectPath } from '../shared/building-blocks.js';
import { ErrorBody, MetricsErrorBody } from '../shared/errors.responses.js';
import type { RequestContext } from '../state.js';
import { readQuery } from '../validation.js';
import { AdminMetrics, EventPropertiesResponse, KeyMetrics, MetricsEventsFeed } from './metrics.responses.js';
import { EventPropertiesQuery, type MetricsQueries, metricsCode, metricsQueries } from './metrics.schema.js';

const metricsError = (description: string) => json(description, MetricsErrorBody);
const codes = (...list: MetricsErrorCode[]) => list.map((code) => `\`${code}\``).join(', ');

const metricsIntro =
  'Every response echoes what the server ran: `event_scope`, `retention_clamped`, `retention_window_days`, `date_from`, `date_to`. ' +
  'Plan effects are narrowed 200s (custom event names left out below Pro; the window clamped to the plan’s allowance), except the 402s.';
const base400 = ['METRICS_INVALID_DATE', 'METRICS_INVALID_RANGE', 'METRICS_INVALID_PARAMETER'] as const;

type OperationName = keyof MetricsQueries;
type Run = (client: Parameters<typeof metrics.summary>[0], target: metrics.MetricsTarget, query: never) => Promise<unknown>;

/**
 * The four operations, each on two surfaces, with their literal paths and operation ids (so that
 * searching for a path finds it), in the order they are registered.
 */
const OPERATIONS = [
  {
    name: 'summary',
    keyPath: '/metrics/summary',
    keyOperationId: 'metricsSummary',
    adminPath: '/projects/:id/metrics/summary',
    adminOperationId: 'projectMetricsSummary',
    summary: 'Aggregate metrics',
    run: metrics.summary,
    response: { key: KeyMetrics.summary, admin: AdminMetrics.summary },
    codes400: [...base400, 'METRICS_UNKNOWN_MEASURE'],
    codes402: 'an `event` filter naming a custom event, below Pro',
  },
  {
    name: 'timeseries',
    keyPath: '/metrics/timeseries',
    keyOperationId: 'metricsTimeseries',
    adminPath: '/projects/:id/metrics/timeseries',
    adminOperationId: 'projectMetricsTimeseries',
    summary: 'Metrics per time bucket',
    run: metrics.timeseries,
    response: { key: KeyMetrics.timeseries, admin: AdminMetrics.timeseries },
    codes400: [...base400, 'METRICS_UNKNOWN_MEASURE', 'METRICS_INVALID_INTERVAL', 'METRICS_TOO_MANY_BUCKETS'],
    codes402: 'an `event` filter naming a custom event, below Pro',
  },
  {
    name: 'breakdown',
    keyPath: '/metrics/breakdown',
    keyOperationId: 'metricsBreakdown',
    adminPath: '/projects/:id/metrics/breakdown',
    adminOperationId: 'projectMetricsBreakdown',
    summary: 'Metrics grouped by one dimension',
    run: metrics.breakdown,
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
  {
    name: 'events',
    keyPath: '/metrics/events',
    keyOperationId: 'metricsEvents',
    adminPath: '/projects/:id/metrics/events',
    adminOperationId: 'projectMetricsEvents',
    summary: 'Raw event feed (Pro and Team)',
    run: eventsFeed,
    response: { key: MetricsEventsFeed, admin: MetricsEventsFeed },
    codes400: [...base400, 'METRICS_INVALID_LIMIT', 'METRICS_INVALID_CURSOR'],
    codes402: 'any request below Pro',
  },
] as const satisfies readonly {
  name: OperationName;
  keyPath: `/metrics/${string}`;
  keyOperationId: string;
  adminPath: `/projects/:id/metrics/${string}`;
  adminOperationId: string;
  summary: string;
  run: Run;
  response: { key: z.ZodType; admin: z.ZodType };
  codes400: readonly MetricsErrorCode[];
  codes402: string;
}[];

/**
 * The operation's query, validated by its schema as the planner reads it: read under the
 * documented names first (readQuery: the camelCase alias of each, `measures` repeated or as a
 * comma list), then each parameter is parsed by its zod schema when the planner first reads it.
 * So of several faults (a bad parameter, a plan's 402, a window outside the supported days) the
 * one the planner meets first is answered, as when it checked the parameters by hand; every
 * refusal is in the metrics error body. The events feed reads `measures` raw, only to refuse it.
 */
function metricsQuery(ctx: RequestContext, schema: z.ZodObject, name: OperationName): Record<string, unknown> {
  const names = name === 'events' ? [...Object.keys(schema.shape), 'measures'] : Object.keys(schema.shape);
  const raw = readQuery(
    ctx.query,
    names,
    (parameter, problem) => new MetricsError('METRICS_INVALID_PARAMETER', `${parameter} ${problem}`),
    {
      lists: ['measures'],
    },
  );
  const query: Record<string, unknown> = {};
  for (const parameter of names) {
    const field = schema.shape[parameter] as z.ZodType | undefined;
    let parsed: { value: unknown } | undefined;
    Object.defineProperty(query, parameter, {
      enumerable: true,
      get() {
        if (!field) return raw[parameter];
        parsed ??= { value: parseParameter(field, parameter, raw[parameter]) };
        return parsed.value;
      },
    });
  }
  return query;
}

function parseParameter(field: z.ZodType, parameter: string, value: string | undefined): unknown {
  const result = field.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const refused = parameter === 'measures' && issue?.path.length === 1 ? commaName(value, Number(issue.path[0])) : undefined;
  throw new MetricsError(metricsCode(parameter, refused), issue?.message ?? `${parameter} is invalid`);
}

/** The n-th distinct name of a comma list, as commaList (metrics.schema.ts) splits it. */
function commaName(list: string | undefined, index: number): string | undefined {
  return [
    ...new Set(
      (list ?? '')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ][index];
}

/**
 * SPEC 4.10, README "Metrics": the four metrics operations on two surfaces. With X-API-Key they
 * answer for the key's project; with the account's admin token, for `:id`, adding the SDK-user and
 * revenue measures.
 */
function metricsRoutesOf(): RouteDefinition[] {
  const keyQueries = metricsQueries('key');
  const adminQueries = metricsQueries('admin');
  return OPERATIONS.flatMap((op) => {
    const bad = metricsError(`${codes(...op.codes400)}. A parameter given twice is \`METRICS_INVALID_PARAMETER\`.`);
    const pro = metricsError(`\`METRICS_CUSTOM_EVENTS_REQUIRE_PRO\`: ${op.codes402}.`);
    const run = op.run as (...args: Parameters<Run>) => Promise<unknown>;
    return [
      defineRoute({
        method: 'get',
        path: op.keyPath,
        auth: 'apiKey',
        operationId: op.keyOperationId,
        tags: ['Metrics'],
        summary: `${op.summary}, for the API key’s project`,
        description: metricsIntro,
        query: keyQueries[op.name],
        responses: {
          200: json('The metrics.', op.response.key),
          400: bad,
          401: error('Missing or invalid API key.'),
          402: pro,
          403:
            op.name === 'events'
              ? error('The project is suspended.')
              : json(
                  'The project is suspended (server-wide body), or an SDK-user or revenue measure was asked (`METRICS_MEASURE_REQUIRES_ADMIN_TOKEN`, metrics body).',
                  z.union([ErrorBody, MetricsErrorBody]),
                ),
          default: defaultError,
        },
        queryReader: (ctx, schema) => metricsQuery(ctx, schema, op.name),
        handler: async (ctx, { clickhouse }, { query }) => {
          const project = keyProject(ctx);
          ctx.body = await run(
            clickhouse,
            { projectId: project.id, plan: project.plan, surface: 'key', sessionTimeoutMinutes: project.session_timeout_minutes },
            query as never,
          );
        },
      }),
      defineRoute({
        method: 'get',
        path: op.adminPath,
        auth: 'projectAdmin',
        operationId: op.adminOperationId,
        tags: ['Metrics'],
        summary: `${op.summary}, for a project of the admin token’s account`,
        description: `${metricsIntro} This surface adds the SDK-user and revenue measures.`,
        params: ProjectPath,
        query: adminQueries[op.name],
        responses: {
          200: json('The metrics.', op.response.admin),
          400: bad,
          402: pro,
          default: defaultError,
        },
        queryReader: (ctx, schema) => metricsQuery(ctx, schema, op.name),
        handler: async (ctx, { clickhouse }, { project, query }) => {
          ctx.body = await run(
            clickhouse,
            { projectId: project.id, plan: project.plan, surface: 'admin', sessionTimeoutMinutes: project.session_timeout_minutes },
            query as never,
          );
        },
      }),
    ];
  });
}

/**
 * The properties a filter bar offers (issue 38, docs/metrics.md "Event properties"): the paths of
 * the window's events, their JSON types and top values, read from the JSON column's structure.
 */
const eventPropertiesRoute = defineRoute({
  method: 'get',
  path: '/projects/:id/event-properties',
  auth: 'projectAdmin',
  operationId: 'projectEventProperties',
  tags: ['Metrics'],
  summary: 'Event properties seen in a window, with their JSON types and top values',
  description:
    'Each property path seen on the window’s events (of `event`, when given), most frequent first (at most 100), as the `property` a filter names, with the JSON column’s types and the 10 most frequent values with their event counts. Plan rules as the metrics: the window clamped to the allowance, custom events left out below Pro.',
  params: ProjectPath,
  query: EventPropertiesQuery,
  responses: {
    200: json('The properties.', EventPropertiesResponse),
    400: json(
      `${codes('METRICS_INVALID_DATE', 'METRICS_INVALID_RANGE', 'METRICS_INVALID_PARAMETER')} in the metrics body; a query holding a string no store can hold (NUL, a lone surrogate) is refused before routing, in the server-wide body.`,
      z.union([MetricsErrorBody, ErrorBody]),
    ),
    402: metricsError('`METRICS_CUSTOM_EVENTS_REQUIRE_PRO`: `event` naming a custom event, below Pro.'),
    default: defaultError,
  },
  queryReader: (ctx, schema) => {
    const raw = readQuery(
      ctx.query,
      Object.keys(schema.shape),
      (parameter, problem) => new MetricsError('METRICS_INVALID_PARAMETER', `${parameter} ${problem}`),
    );
    return Object.fromEntries(
      Object.keys(schema.shape).map((parameter) => [
        parameter,
        parseParameter(schema.shape[parameter] as z.ZodType, parameter, raw[parameter]),
      ]),
    );
  },
  handler: async (ctx, { clickhouse }, { project, query }) => {
    ctx.body = await eventProperties(clickhouse, { projectId: project.id, plan: project.plan, surface: 'admin' }, query as never);
  },
});

export const metricsRoutes = [...metricsRoutesOf(), eventPropertiesRoute];
