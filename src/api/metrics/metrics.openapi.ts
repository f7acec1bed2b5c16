import { z } from 'zod';
import { ErrorBody } from '../errors.responses.js';
import { ADMIN_TOKEN, API_KEY, ProjectPath, defaultError, describe, error, json, type Route } from '../openapi/building-blocks.js';
import type { MetricsErrorCode } from '../../olap/metrics/metrics.errors.js';
import { ADMIN_SURFACE_MEASURES, INTERVALS, KEY_SURFACE_MEASURES, PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { AdminMetrics, KeyMetrics, MetricsErrorBody, MetricsEventsFeed } from './metrics.responses.js';
import { EARLIEST_DAY, LATEST_DAY, MAX_BUCKETS } from '../../olap/metrics/window.js';

/*
 * Metrics query parameters have no zod schema in the service (it parses them itself, to answer
 * METRICS_* codes); they are described here from the constants the service uses.
 */

const metricsError = (description: string) => json(description, MetricsErrorBody);
const codes = (...list: MetricsErrorCode[]) => list.map((code) => `\`${code}\``).join(', ');

// Metrics query parameters (README "Metrics"), read verbatim; each may be given at most once.

const dateParam = (which: 'first' | 'last') =>
  describe(
    z.iso.date().optional(),
    which === 'first'
      ? `First day, \`YYYY-MM-DD\`, UTC, inclusive. Default: 29 days before \`date_to\`. A window longer than the plan allows is narrowed to its most recent days (\`retention_clamped\`). The applied window must lie within ${EARLIEST_DAY} to ${LATEST_DAY} (400 \`METRICS_INVALID_DATE\` otherwise); an earlier date_from that the narrowing moves into range is fine.`
      : `Last day, \`YYYY-MM-DD\`, UTC, inclusive, ${EARLIEST_DAY} to ${LATEST_DAY} (400 \`METRICS_INVALID_DATE\` otherwise). Default: today.`,
  );

const eventParam = describe(
  z.string().min(1).max(100).optional(),
  `Restrict the event measures (the feed) to one event name. Below Pro, a name other than ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} is a 402.`,
);

/**
 * `measures=a&measures=b`: an array in OpenAPI's form style, exploded, as generated clients send
 * arrays by default; the unexploded comma list `measures=a,b` is accepted as well (readQuery).
 */
const measuresParam = (names: readonly string[], description: string) =>
  describe(
    z.array(z.enum(names as [string, ...string[]])).optional(),
    `${description} Repeated (\`measures=a&measures=b\`, form style exploded) or as one comma-separated list (\`measures=a,b\`, unexploded); both forms may be mixed.`,
    { style: 'form', explode: true },
  );

const limitParam = (fallback: number, what: string) =>
  describe(z.number().int().min(1).max(1000).optional().meta({ default: fallback }), `At most this many ${what}, 1 to 1000.`);

function metricsQueries(surface: 'key' | 'admin') {
  const names = surface === 'key' ? KEY_SURFACE_MEASURES : ADMIN_SURFACE_MEASURES;
  const refusals =
    ' An unknown name is a 400 `METRICS_UNKNOWN_MEASURE`' +
    (surface === 'key' ? '; an SDK-user or revenue measure is a 403 `METRICS_MEASURE_REQUIRES_ADMIN_TOKEN` on this surface.' : '.');
  const common = { date_from: dateParam('first'), date_to: dateParam('last'), event: eventParam };
  return {
    summary: z.object({ ...common, measures: measuresParam(names, `A subset of the measures; default: all of them.${refusals}`) }),
    timeseries: z.object({
      ...common,
      measures: measuresParam(names, `A subset of the measures; default: all of them.${refusals}`),
      interval: describe(
        z.enum(INTERVALS).optional().meta({ default: 'day' }),
        `Bucket size (weeks start on Monday, UTC); every bucket is present, zero-filled. More than ${MAX_BUCKETS} buckets is a 400.`,
      ),
    }),
    breakdown: z.object({
      ...common,
      measures: measuresParam(
        names,
        `A subset of the measures; default: all of those the dimension can split. One it cannot split is a 400 \`METRICS_MEASURE_NOT_SPLITTABLE\`.${refusals}`,
      ),
      // The service's own check: metrics.planner.ts breakdown() and PROPERTY_KEY.
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

const metricsIntro =
  'Every response echoes what the server ran: `event_scope`, `retention_clamped`, `retention_window_days`, `date_from`, `date_to`. ' +
  'Plan effects are narrowed 200s (custom event names left out below Pro; the window clamped to the plan’s allowance), except the 402s.';
const base400 = ['METRICS_INVALID_DATE', 'METRICS_INVALID_RANGE', 'METRICS_INVALID_PARAMETER'] as const;

/**
 * The four operations, each on two surfaces, with their literal paths and operation ids (so that
 * searching for a path finds it), in the order they are registered.
 */
const OPERATIONS = [
  {
    name: 'summary',
    keyPath: '/metrics/summary',
    keyOperationId: 'metricsSummary',
    adminPath: '/projects/{id}/metrics/summary',
    adminOperationId: 'projectMetricsSummary',
    summary: 'Aggregate metrics',
    response: { key: KeyMetrics.summary, admin: AdminMetrics.summary },
    codes400: [...base400, 'METRICS_UNKNOWN_MEASURE'],
    codes402: 'an `event` filter naming a custom event, below Pro',
  },
  {
    name: 'timeseries',
    keyPath: '/metrics/timeseries',
    keyOperationId: 'metricsTimeseries',
    adminPath: '/projects/{id}/metrics/timeseries',
    adminOperationId: 'projectMetricsTimeseries',
    summary: 'Metrics per time bucket',
    response: { key: KeyMetrics.timeseries, admin: AdminMetrics.timeseries },
    codes400: [...base400, 'METRICS_UNKNOWN_MEASURE', 'METRICS_INVALID_INTERVAL', 'METRICS_TOO_MANY_BUCKETS'],
    codes402: 'an `event` filter naming a custom event, below Pro',
  },
  {
    name: 'breakdown',
    keyPath: '/metrics/breakdown',
    keyOperationId: 'metricsBreakdown',
    adminPath: '/projects/{id}/metrics/breakdown',
    adminOperationId: 'projectMetricsBreakdown',
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
  {
    name: 'events',
    keyPath: '/metrics/events',
    keyOperationId: 'metricsEvents',
    adminPath: '/projects/{id}/metrics/events',
    adminOperationId: 'projectMetricsEvents',
    summary: 'Raw event feed (Pro and Team)',
    response: { key: MetricsEventsFeed, admin: MetricsEventsFeed },
    codes400: [...base400, 'METRICS_INVALID_LIMIT', 'METRICS_INVALID_CURSOR'],
    codes402: 'any request below Pro',
  },
] as const satisfies readonly {
  name: keyof ReturnType<typeof metricsQueries>;
  keyPath: `/metrics/${string}`;
  keyOperationId: string;
  adminPath: `/projects/{id}/metrics/${string}`;
  adminOperationId: string;
  summary: string;
  response: { key: z.ZodType; admin: z.ZodType };
  codes400: readonly MetricsErrorCode[];
  codes402: string;
}[];

/** The metrics operations on two surfaces (SPEC 4.10, README "Metrics"): the API key's project, or any project of the admin token's account. */
export function registerMetricsPaths(route: Route) {
  const keyQueries = metricsQueries('key');
  const adminQueries = metricsQueries('admin');
  for (const op of OPERATIONS) {
    const bad = metricsError(`${codes(...op.codes400)}. A parameter given twice is \`METRICS_INVALID_PARAMETER\`.`);
    const pro = metricsError(`\`METRICS_CUSTOM_EVENTS_REQUIRE_PRO\`: ${op.codes402}.`);
    route({
      method: 'get',
      path: op.keyPath,
      operationId: op.keyOperationId,
      tags: ['Metrics'],
      summary: `${op.summary}, for the API key’s project`,
      description: metricsIntro,
      security: API_KEY,
      request: { query: keyQueries[op.name] },
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
    });
    route({
      method: 'get',
      path: op.adminPath,
      operationId: op.adminOperationId,
      tags: ['Metrics'],
      summary: `${op.summary}, for a project of the admin token’s account`,
      description: `${metricsIntro} This surface adds the SDK-user and revenue measures.`,
      security: ADMIN_TOKEN,
      request: { params: ProjectPath, query: adminQueries[op.name] },
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
}
