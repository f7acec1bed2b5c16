import { z } from 'zod';
import { FILTER_OPS, type FilterList, MAX_FILTERS } from '../../olap/filter-types.js';
import { MAX_FUNNEL_STEPS } from '../../olap/insights/funnel.queries.js';
import { MAX_PATH_DEPTH, MIN_PATH_DEPTH } from '../../olap/insights/paths.queries.js';
import { COMPARE_KINDS } from '../../olap/metrics/window.js';
import { describe } from '../shared/building-blocks.js';
import { checkFilterList } from '../shared/filters.schema.js';
import { bodySchema } from '../validation.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The metrics breakdown's property keys (docs/metrics.md), for the funnel's breakdown too. */
const PROPERTY_KEY = /^[A-Za-z0-9_$\-.:@ ]{1,100}$/;
const DAY_SECONDS = 86_400;

const day = z.string({ error: 'must be a date as YYYY-MM-DD' }).regex(DATE, 'must be a date as YYYY-MM-DD').optional();
export const eventName = z
  .string({ error: 'must be a string' })
  .min(1, 'must be 1 to 100 characters')
  .max(100, 'must be 1 to 100 characters');
const propertyKey = z.string({ error: 'must be a string' }).regex(PROPERTY_KEY, 'must be 1 to 100 letters, digits or _$-.:@ and spaces');
const propertyValue = z.union([z.string().max(1000), z.number().finite(), z.boolean()], {
  error: 'must be a string (at most 1000 characters), a number or a boolean',
});

/*
 * The body field `filters`, checked by the shared checkFilterList (src/api/shared/filters.schema.ts),
 * whose refusal's path is the filter's position, so the message reads `filters.2.op: …` (and
 * `steps.1.filters.0.value: …` inside a step). The shape the document shows is written here with
 * `value` as the JSON values it may be: the shared field's `value` (any JSON) is documented as a
 * bare `nullable`, which OpenAPI 3.0 refuses without a type.
 */
const filterScalar = z.union([z.string(), z.number(), z.boolean()]);
const InsightsFilterLeaf = z
  .object({
    property: z.string().meta({
      description: 'What is compared: properties.<key>[.<key>…], event_name, user_id or user.mrr.',
      example: 'properties.plan',
    }),
    op: z.enum(FILTER_OPS),
    value: z
      .union([filterScalar, z.array(filterScalar)])
      .optional()
      .meta({
        description:
          'A string, number or boolean (eq, neq); a list of them (in, not_in); a string (contains, not_contains, starts_with, regex: re2, at most 1,000 characters); a number (gt, gte, lt, lte); [low, high] (between, both included); none (is_set, is_not_set).',
      }),
  })
  .meta({ id: 'InsightsFilter', description: 'One comparison (docs/metrics.md, "Filters").' });
const InsightsFilterNode = z
  .union([
    InsightsFilterLeaf,
    z.object({ any: z.array(z.union([InsightsFilterLeaf, z.object({ any: z.array(InsightsFilterLeaf).min(1) })])).min(1) }),
  ])
  .meta({
    id: 'InsightsFilterNode',
    description: 'A filter, or `{ any: [...] }`: at least one of its filters holds. Groups nest at most 2 deep.',
  });
const FilterListBody = z.preprocess((input, ctx) => {
  const checked = checkFilterList(input);
  if ('filters' in checked) return checked.filters;
  ctx.issues.push({ code: 'custom', path: checked.issue.path, message: checked.issue.message, input });
  return z.NEVER;
}, z.array(InsightsFilterNode).max(MAX_FILTERS)) as unknown as z.ZodType<FilterList>;

/** The request's `filters` (docs/insights.md, "Filters"): only the events that pass them are read. */
const filters = describe(
  FilterListBody.optional(),
  'Only the events that pass all of these are read (docs/metrics.md, "Filters"); below Pro an `event_name` filter naming a custom event is a 402.',
);

/**
 * A funnel step: an event name and, optionally, top-level properties it must carry with these
 * values (`where`, a shorthand for `eq` filters on `properties.<key>`) and filters of its own.
 */
export const FunnelStepBody = bodySchema({
  eventName,
  where: z
    .record(propertyKey, propertyValue)
    .refine((where) => Object.keys(where).length <= 10, 'at most 10 properties')
    .optional(),
  filters: describe(
    FilterListBody.optional(),
    'This step’s events must also pass all of these (docs/metrics.md, "Filters"); beside `where` and the body’s `filters`.',
  ),
});

export const FunnelBody = bodySchema({
  steps: z
    .array(FunnelStepBody)
    .min(2, `must have 2 to ${MAX_FUNNEL_STEPS} steps`)
    .max(MAX_FUNNEL_STEPS, `must have 2 to ${MAX_FUNNEL_STEPS} steps`),
  dateFrom: day,
  dateTo: day,
  conversionWindowSeconds: z
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1')
    .max(365 * DAY_SECONDS, 'must be at most 365 days')
    .default(7 * DAY_SECONDS),
  breakdown: propertyKey.optional(),
  filters,
  compare: describe(
    z.enum(COMPARE_KINDS, { error: 'must be previous_period or previous_year' }).optional(),
    'Adds `compare`: the funnel (steps only) over the same number of days right before `dateFrom` (`previous_period`), or over the same dates one year earlier (`previous_year`). The earlier window obeys the plan’s allowance counted back from `dateTo`: what lies before it is not read (`compare.retention_clamped`).',
  ),
});
export type FunnelBody = z.infer<typeof FunnelBody>;

export const RetentionBody = bodySchema({
  cohortEvent: eventName.optional(),
  returnEvent: eventName.optional(),
  interval: z.enum(['day', 'week'], { error: 'must be day or week' }),
  periods: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be 1 to 52').max(52, 'must be 1 to 52'),
  dateFrom: day,
  dateTo: day,
  filters,
});
export type RetentionBody = z.infer<typeof RetentionBody>;

/** Most edges a paths answer may ask for. */
export const MAX_PATH_EDGES = 200;

export const PathsBody = bodySchema({
  startEvent: eventName.optional(),
  endEvent: eventName.optional(),
  depth: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(MIN_PATH_DEPTH, `must be ${MIN_PATH_DEPTH} to ${MAX_PATH_DEPTH}`)
    .max(MAX_PATH_DEPTH, `must be ${MIN_PATH_DEPTH} to ${MAX_PATH_DEPTH}`)
    .default(4),
  dateFrom: day,
  dateTo: day,
  limit: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, `must be 1 to ${MAX_PATH_EDGES}`)
    .max(MAX_PATH_EDGES, `must be 1 to ${MAX_PATH_EDGES}`)
    .default(50),
  excludeEvents: z
    .array(eventName)
    .max(50, 'must name at most 50 events')
    .transform((names) => [...new Set(names)])
    .default([]),
  filters,
});
export type PathsBody = z.infer<typeof PathsBody>;

export const ImpactLinkBody = bodySchema({
  eventNames: z
    .array(eventName)
    .min(1, 'must name 1 to 20 events')
    .max(20, 'must name 1 to 20 events')
    .transform((names) => [...new Set(names)]),
});
export type ImpactLinkBody = z.infer<typeof ImpactLinkBody>;

export const SavedQueryBody = bodySchema({
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must be 1 to 200 characters').max(200, 'must be 1 to 200 characters'),
  sql: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters'),
});
export type SavedQueryBody = z.infer<typeof SavedQueryBody>;

/**
 * A whole number from `min` to `max` in a query parameter: digits only (no sign, point or
 * exponent), refused as `<name> must be an integer from <min> to <max>`.
 */
const wholeNumber = (min: number, max: number) => {
  const message = `must be an integer from ${min} to ${max}`;
  return z
    .preprocess(
      (value) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value),
      z.number({ error: message }).int(message).min(min, message).max(max, message),
    )
    .optional();
};

/**
 * A day of the window, as the metrics window reads it (src/olap/metrics/window.ts), which refuses a
 * malformed one with `METRICS_INVALID_DATE`: described as a date, passed on as given.
 */
const windowDay = (description: string) => describe(z.string().optional().meta({ format: 'date' }), description);
const windowDays = {
  date_from: windowDay('First day (UTC). Default: 29 days before date_to.'),
  date_to: windowDay('Last day (UTC). Default: today.'),
};

/** GET /projects/:id/event-names query. */
export const EventNamesQuery = z.object({
  ...windowDays,
  limit: describe(wholeNumber(1, 1000), 'At most this many names (default 100).'),
});

/** GET /projects/:id/insights/ship-dates query. */
export const ShipDatesQuery = z.object(windowDays);

/** GET /projects/:id/feedbacks/:feedbackId/impact query. */
export const ImpactQuery = z.object({ days: describe(wholeNumber(1, 365), 'Days before and after shipped_at (default 30).') });
