import { z } from 'zod';
import { MAX_PATH_KEYS, PROPERTY_KEY } from '../../olap/filter-sql.js';
import { decodeCursor } from '../../olap/metrics/events-feed.js';
import {
  ACTIVE_USER_MEASURES,
  ADMIN_SURFACE_MEASURES,
  INTERVALS,
  KEY_SURFACE_MEASURES,
  type Measure,
  PREDEFINED_EVENTS,
  PROPERTY_MATH,
  SESSION_MEASURES,
} from '../../olap/metrics/measures.js';
import type { MetricsErrorCode } from '../../olap/metrics/metrics.errors.js';
import { COMPARE_KINDS, EARLIEST_DAY, LATEST_DAY, MAX_BUCKETS } from '../../olap/metrics/window.js';
import { describe } from '../shared/building-blocks.js';
import { filtersQueryParam } from '../shared/filters.schema.js';

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
  `Restrict the event measures (the feed) to one event name; the session measures keep the sessions holding an event of that name (docs/sessions.md). Below Pro, a name other than ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} is a 402.`,
);

const unknownMeasure = (name: unknown) =>
  `unknown measure "${String(name).slice(0, 200)}"; known: ${[...ADMIN_SURFACE_MEASURES, ...ACTIVE_USER_MEASURES, ...SESSION_MEASURES].join(', ')}, and ${PROPERTY_MATH.join('|')}:<property>`;
const adminOnlyMeasure = (name: unknown) => `measure "${String(name)}" is answered only with an admin bearer token`;
const isAdminSurfaceMeasure = (name: unknown) => (ADMIN_SURFACE_MEASURES as readonly unknown[]).includes(name);

/**
 * `measures=a&measures=b`: an array in OpenAPI's form style, exploded, as generated clients send
 * arrays by default; the unexploded comma list `measures=a,b` is accepted as well (readQuery).
 */
/**
 * A property measure: `<math>:<path>`, the path in the filter language's form
 * (`properties.a.b`) or a bare key path (`a.b`, meaning `properties.a.b`); keys as filters take them.
 */
const KEY = PROPERTY_KEY.source.replace(/^\^|\$$/g, '');
const PROPERTY_MEASURE = new RegExp(`^(${PROPERTY_MATH.join('|')}):(properties\\.)?${KEY}(\\.${KEY}){0,${MAX_PATH_KEYS - 1}}$`);

// On the key surface an admin measure is a known name answered elsewhere: a 403.
const measureRefusal = (issue: { input?: unknown }) =>
  isAdminSurfaceMeasure(issue.input) ? adminOnlyMeasure(issue.input) : unknownMeasure(issue.input);

const measureName = (names: readonly Measure[]) =>
  z.union(
    [
      z.enum([...names, ...ACTIVE_USER_MEASURES] as unknown as [Measure, ...Measure[]], { error: measureRefusal }),
      z.string({ error: measureRefusal }).regex(PROPERTY_MEASURE, { error: measureRefusal }),
    ],
    { error: measureRefusal },
  );

const measuresParam = (names: readonly Measure[], description: string) =>
  describe(
    z.preprocess(commaList, z.array(measureName(names)).optional()).optional(),
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

const GENERAL_DIMENSION = 'dimension must be one of event_name, category, status, property.<key>, entry_event, entry.property.<key>';
const PROPERTY_DIMENSION = 'property.<key>: key must be 1 to 100 letters, digits or _$-.:@ and spaces';
const ENTRY_PROPERTY_DIMENSION = 'entry.property.<key>: key must be 1 to 100 letters, digits or _$-.:@ and spaces';

const MEASURES_LIST = `The measures to answer (docs/metrics.md, "Measures"): named ones, \`dau\`, \`wau\`, \`mau\`, \`events_per_user\`, the session measures (docs/sessions.md), and property math \`${PROPERTY_MATH.join('|')}:<property>\` (\`sum:properties.amount\`; \`sum:amount\` is the same), answered under the name as requested.`;

const compareParam = describe(
  z.enum(COMPARE_KINDS, { error: 'compare must be previous_period or previous_year' }).optional(),
  'Adds `compare`: the same answer over the same number of days right before `date_from` (`previous_period`), or over the same dates one year earlier (`previous_year`), and the change of each measure. The earlier window obeys the plan’s allowance counted back from `date_to`: what lies before it is not read (`compare.retention_clamped`).',
);

export function metricsQueries(surface: 'key' | 'admin') {
  // The session measures are answered when asked for, never by default (sessionMeasures: src/olap/metrics/sessions.queries.ts).
  const defaults = surface === 'key' ? KEY_SURFACE_MEASURES : ADMIN_SURFACE_MEASURES;
  const names = [...defaults, ...SESSION_MEASURES];
  const refusals =
    ' An unknown name is a 400 `METRICS_UNKNOWN_MEASURE`' +
    (surface === 'key' ? '; an SDK-user or revenue measure is a 403 `METRICS_MEASURE_REQUIRES_ADMIN_TOKEN` on this surface.' : '.');
  const common = { date_from: dateParam('first'), date_to: dateParam('last'), event: eventParam };
  const asked = { filters: filtersQueryParam, compare: compareParam };
  const measures = measuresParam(names, `${MEASURES_LIST} Default: ${defaults.join(', ')}.${refusals}`);
  return {
    summary: z.object({ ...common, ...asked, measures }),
    timeseries: z.object({
      ...common,
      ...asked,
      measures,
      interval: describe(
        z.enum(INTERVALS, { error: 'interval must be one of hour, day, week, month' }).optional().meta({ default: 'day' }),
        `Bucket size (weeks start on Monday, UTC); every bucket is present, zero-filled. More than ${MAX_BUCKETS} buckets is a 400.`,
      ),
    }),
    breakdown: z.object({
      ...common,
      ...asked,
      measures: measuresParam(
        names,
        `${MEASURES_LIST} Default: those of ${defaults.join(', ')} that the dimension can split. One it cannot split is a 400 \`METRICS_MEASURE_NOT_SPLITTABLE\` (an event dimension splits the event measures, property math and active users; category and status the feedback measures).${refusals}`,
      ),
      dimension: describe(
        z
          .string({ error: GENERAL_DIMENSION })
          .regex(/^(event_name|category|status|entry_event|(entry\.)?property\.[A-Za-z0-9_$\-.:@ ]{1,100})$/, {
            error: (issue) =>
              typeof issue.input === 'string' && issue.input.startsWith('property.')
                ? PROPERTY_DIMENSION
                : typeof issue.input === 'string' && issue.input.startsWith('entry.property.')
                  ? ENTRY_PROPERTY_DIMENSION
                  : GENERAL_DIMENSION,
          })
          .meta({ example: 'property.plan' }),
        '`event_name` (Pro and Team; 402 below), `category`, `status` (as of `date_to`), or `property.<key>` (a top-level event property; events without it form the row with key null). For the session measures (docs/sessions.md), and only for them: `entry_event` (the session’s first event’s name) or `entry.property.<key>` (a top-level property of that first event; null when it lacks it). Required.',
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

/** GET /projects/:id/event-properties: the window and, optionally, one event name. */
export const EventPropertiesQuery = z.object({
  date_from: dateParam('first'),
  date_to: dateParam('last'),
  event: describe(
    z.string().min(1, 'event must be 1 to 100 characters').max(100, 'event must be 1 to 100 characters').optional(),
    `Only the properties of this event. Below Pro, a name other than ${PREDEFINED_EVENTS.map((e) => `\`${e}\``).join(', ')} is a 402; without it, below Pro, only those events are read.`,
  ),
});
