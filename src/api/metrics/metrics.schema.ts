import { z } from 'zod';
import { ADMIN_SURFACE_MEASURES, INTERVALS, KEY_SURFACE_MEASURES, type Measure, PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import type { MetricsErrorCode } from '../../olap/metrics/metrics.errors.js';
import { decodeCursor } from '../../olap/metrics/metrics.planner.js';
import { EARLIEST_DAY, LATEST_DAY, MAX_BUCKETS } from '../../olap/metrics/window.js';
import { describe } from '../shared/building-blocks.js';

/*
 * The metrics query parameters, one zod schema per operation and surface: the route validates the
 * query with it (metrics.routes.ts) and the OpenAPI document describes it. Each parameter's
 * refusal keeps the metrics API's code and message (SPEC 7.2): the message is the zod error of
 * the field, the code is metricsCode's. The route parses each parameter when the planner reads it,
 * so the planner's order of checks is kept. What depends on the plan or the window as a whole (the
 * 402s, the supported days, the range, the bucket count, splittable measures) stays with the
 * planner (src/olap/metrics/).
 */

/**
 * `measures=a,b` (readQuery joins the repeated form into this too): the names, trimmed, once each.
 * An empty or blank value means the default measures (undefined); a list of commas only, none.
 */
function commaList(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return undefined;
  return [
    ...new Set(
      value
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    ),
  ];
}

/** `limit` as the planner took it: digits only (no `1e2`, no sign, no spaces), then 1 to 1000. */
const digitsToNumber = (value: unknown) => (typeof value === 'string' ? (/^\d+$/.test(value) ? Number(value) : Number.NaN) : value);

const dateParam = (which: 'first' | 'last') => {
  const name = which === 'first' ? 'date_from' : 'date_to';
  return describe(
    z.iso.date({ error: `${name} must be a date as YYYY-MM-DD` }).optional(),
    which === 'first'
      ? `First day, \`YYYY-MM-DD\`, UTC, inclusive. Default: 29 days before \`date_to\`. A window longer than the plan allows is narrowed to its most recent days (\`retention_clamped\`). The applied window must lie within ${EARLIEST_DAY} to ${LATEST_DAY} (400 \`METRICS_INVALID_DATE\` otherwise); an earlier date_from that the narrowing moves into range is fine.`
      : `Last day, \`YYYY-MM-DD\`, UTC, inclusive, ${EARLIEST_DAY} to ${LATEST_DAY} (400 \`METRICS_INVALID_DATE\` otherwise). Default: today.`,
  );
};

const eventParam = describe(
  z.string().min(1, 'event must be 1 to 100 characters').max(100, 'event must be 1 to 100 characters').optional(),
  `Restrict the event measures (the feed) to one event name. Below Pro, a name other than ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} is a 402.`,
);

const unknownMeasure = (name: unknown) => `unknown measure "${String(name)}"; known: ${ADMIN_SURFACE_MEASURES.join(', ')}`;
const adminOnlyMeasure = (name: unknown) => `measure "${String(name)}" is answered only with an admin bearer token`;
const isAdminSurfaceMeasure = (name: unknown) => (ADMIN_SURFACE_MEASURES as readonly unknown[]).includes(name);

/**
 * `measures=a&measures=b`: an array in OpenAPI's form style, exploded, as generated clients send
 * arrays by default; the unexploded comma list `measures=a,b` is accepted as well (readQuery).
 */
const measuresParam = (names: readonly Measure[], description: string) =>
  describe(
    z
      .preprocess(
        commaList,
        z
          .array(
            z.enum(names as [Measure, ...Measure[]], {
              // On the key surface an admin measure is a known name answered elsewhere: a 403.
              error: (issue) => (isAdminSurfaceMeasure(issue.input) ? adminOnlyMeasure(issue.input) : unknownMeasure(issue.input)),
            }),
          )
          .optional(),
      )
      .optional(),
    `${description} Repeated (\`measures=a&measures=b\`, form style exploded) or as one comma-separated list (\`measures=a,b\`, unexploded); both forms may be mixed.`,
    { style: 'form', explode: true },
  );

const limitParam = (fallback: number, what: string) =>
  describe(
    z
      .preprocess(digitsToNumber, z.number({ error: LIMIT_MESSAGE }).int(LIMIT_MESSAGE).min(1, LIMIT_MESSAGE).max(1000, LIMIT_MESSAGE))
      .optional()
      .meta({ default: fallback }),
    `At most this many ${what}, 1 to 1000.`,
  );
const LIMIT_MESSAGE = 'limit must be an integer from 1 to 1000';

const GENERAL_DIMENSION = 'dimension must be one of event_name, category, status, property.<key>';
const PROPERTY_DIMENSION = 'property.<key>: key must be 1 to 100 letters, digits or _$-.:@ and spaces';

export function metricsQueries(surface: 'key' | 'admin') {
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
        z.enum(INTERVALS, { error: 'interval must be one of hour, day, week, month' }).optional().meta({ default: 'day' }),
        `Bucket size (weeks start on Monday, UTC); every bucket is present, zero-filled. More than ${MAX_BUCKETS} buckets is a 400.`,
      ),
    }),
    breakdown: z.object({
      ...common,
      measures: measuresParam(
        names,
        `A subset of the measures; default: all of those the dimension can split. One it cannot split is a 400 \`METRICS_MEASURE_NOT_SPLITTABLE\`.${refusals}`,
      ),
      dimension: describe(
        z
          .string({ error: GENERAL_DIMENSION })
          .regex(/^(event_name|category|status|property\.[A-Za-z0-9_$\-.:@ ]{1,100})$/, {
            error: (issue) =>
              typeof issue.input === 'string' && issue.input.startsWith('property.') ? PROPERTY_DIMENSION : GENERAL_DIMENSION,
          })
          .meta({ example: 'property.plan' }),
        '`event_name` (Pro and Team; 402 below), `category`, `status` (as of `date_to`), or `property.<key>` (a top-level event property; events without it form the row with key null). Required.',
      ),
      limit: limitParam(10, 'rows (by the first measure descending)'),
    }),
    events: z.object({
      ...common,
      limit: limitParam(100, 'events (newest first)'),
      cursor: describe(
        z
          .string()
          .transform((value, ctx) => {
            const cursor = decodeCursor(value);
            if (cursor) return cursor;
            ctx.issues.push({ code: 'custom', input: value, message: 'cursor is not one this API returned' });
            return z.NEVER;
          })
          .optional(),
        'The `next_cursor` of the previous page.',
      ),
      user_id: describe(z.string().min(1, 'user_id must be at least 1 character').optional(), 'Only this user’s events.'),
    }),
  };
}

export type MetricsQueries = ReturnType<typeof metricsQueries>;

/** The code of a refused parameter, by its name (and, for `measures`, by the name refused). */
export function metricsCode(field: string, input: unknown): MetricsErrorCode {
  switch (field) {
    case 'date_from':
    case 'date_to':
      return 'METRICS_INVALID_DATE';
    case 'measures':
      return isAdminSurfaceMeasure(input) ? 'METRICS_MEASURE_REQUIRES_ADMIN_TOKEN' : 'METRICS_UNKNOWN_MEASURE';
    case 'interval':
      return 'METRICS_INVALID_INTERVAL';
    case 'dimension':
      return 'METRICS_INVALID_DIMENSION';
    case 'limit':
      return 'METRICS_INVALID_LIMIT';
    case 'cursor':
      return 'METRICS_INVALID_CURSOR';
    default:
      return 'METRICS_INVALID_PARAMETER';
  }
}
