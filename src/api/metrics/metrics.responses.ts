import { z } from 'zod';
import type { eventProperties } from '../../olap/metrics/event-properties.js';
import type { eventsFeed } from '../../olap/metrics/events-feed.js';
import {
  ACTIVE_USER_MEASURES,
  ADMIN_MEASURES,
  EVENT_MEASURES,
  FEEDBACK_MEASURES,
  INTERVALS,
  type Measure,
  PROPERTY_MATH,
  type PropertyMeasure,
  SESSION_MEASURES,
  type SessionMeasure,
} from '../../olap/metrics/measures.js';
import type * as metrics from '../../olap/metrics/metrics.planner.js';
import { count, timestamp } from '../shared/response-fields.js';
import type { Expect, Mutual, Out, Result, SameShape } from '../shared/shape-checks.js';
import { TrackedEventResponse } from '../shared/tracked-event.responses.js';

// Metrics (SPEC 2.8, README "Metrics"); their error body (SPEC 7.2) is in shared/errors.responses.ts

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

const MEASURE_DESCRIPTIONS: Record<Exclude<Measure, PropertyMeasure>, string> = {
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
  dau: 'Distinct users with an event in scope on the last day (a bucket’s last day; `date_to` for summary and breakdown).',
  wau: 'Distinct users with an event in scope in the 7 days ending with the last day (may reach before `date_from`, never before the plan’s allowance).',
  mau: 'Distinct users with an event in scope in the 30 days ending with the last day (may reach before `date_from`, never before the plan’s allowance).',
  events_per_user: '`event_count` / `unique_event_users`; null when there is no user.',
  sessions:
    'Sessions that start in the bucket: runs of one user’s events with no gap longer than the project’s `session_timeout_minutes` (docs/sessions.md). Formed from the window’s events in the plan’s event scope; with `event` (or filters), only the sessions holding a matching event.',
  session_duration_avg: 'Mean session duration in seconds, first event to last (0 for a one-event session); null without sessions.',
  session_duration_median:
    'Median session duration in seconds (exact, linearly interpolated between the two middle sessions); null without sessions.',
  session_duration_p90: '90th percentile of session duration in seconds (exact, linearly interpolated); null without sessions.',
  bounce_rate: 'Share of the sessions with exactly one event, 0 to 1; null without sessions.',
  events_per_session: 'Events per session: all the events of the counted sessions over their number; null without sessions.',
};

const measure = <S extends z.ZodType>(name: Exclude<Measure, PropertyMeasure>, schema: S) =>
  schema.optional().meta({ description: MEASURE_DESCRIPTIONS[name] });
const sessionMeasure = (name: SessionMeasure, schema: z.ZodNumber) =>
  schema.nullable().optional().meta({ description: MEASURE_DESCRIPTIONS[name] });

const sessionMeasureFields = {
  sessions: measure('sessions', count),
  session_duration_avg: sessionMeasure('session_duration_avg', z.number().min(0)),
  session_duration_median: sessionMeasure('session_duration_median', z.number().min(0)),
  session_duration_p90: sessionMeasure('session_duration_p90', z.number().min(0)),
  bounce_rate: sessionMeasure('bounce_rate', z.number().min(0).max(1)),
  events_per_session: sessionMeasure('events_per_session', z.number().min(1)),
};

const keyMeasureFields = {
  event_count: measure('event_count', count),
  unique_event_users: measure('unique_event_users', count),
  feedback_count: measure('feedback_count', count),
  vote_count: measure('vote_count', z.number().int()),
  comment_count: measure('comment_count', count),
  dau: measure('dau', count),
  wau: measure('wau', count),
  mau: measure('mau', count),
  events_per_user: measure('events_per_user', z.number().nullable()),
  ...sessionMeasureFields,
};

/** `sum:properties.amount` and the rest of the property math: keys as requested. */
const propertyMath = z
  .number()
  .nullable()
  .meta({
    description: `Property math (${PROPERTY_MATH.map((m) => `\`${m}:<path>\``).join(', ')}), under the measure exactly as requested: over the numeric values of the property in scope; null when the bucket has none.`,
  });

const adminMeasureFields = {
  ...keyMeasureFields,
  sdk_users: measure('sdk_users', count),
  new_sdk_users: measure('new_sdk_users', count),
  active_sdk_users: measure('active_sdk_users', count),
  paying_users: measure('paying_users', count),
  total_mrr: measure('total_mrr', z.number()),
  voter_mrr: measure('voter_mrr', z.number()),
};

export const KeyMeasureValues = z
  .object(keyMeasureFields)
  .catchall(propertyMath)
  .meta({
    id: 'MeasureValues',
    description: `Values of the requested measures (all of them by default); only those asked for are present. Measures of the API-key surface: ${[...EVENT_MEASURES, ...FEEDBACK_MEASURES, ...ACTIVE_USER_MEASURES, ...SESSION_MEASURES].join(', ')}, and the property math (the session measures and the property math only when asked for).`,
  });

export const AdminMeasureValues = z
  .object(adminMeasureFields)
  .catchall(propertyMath)
  .meta({
    id: 'AdminMeasureValues',
    description: `Values of the requested measures (all of them by default); only those asked for are present. The admin-token surface adds the SDK-user and revenue measures: ${ADMIN_MEASURES.join(', ')}.`,
  });

type Surface = 'Key' | 'Admin';

/** What every compare block echoes: the earlier window as applied (docs/metrics.md, "Compare"). */
const compareEcho = {
  date_from: z.iso.date().meta({ description: 'First day of the earlier window as applied (UTC, inclusive).' }),
  date_to: z.iso.date().meta({ description: 'Last day of the earlier window (UTC, inclusive).' }),
  retention_clamped: z.boolean().meta({
    description:
      'True when the plan’s allowance cut the earlier window: nothing before it was read (and nothing at all when the whole window lies before it).',
  }),
};

const changeValues = z
  .record(z.string(), z.number().nullable())
  .meta({ description: 'For each measure, (now − before) / before; null when before is 0 or either is null.' });

function metricsResponses<M extends typeof KeyMeasureValues | typeof AdminMeasureValues>(surface: Surface, measures: M) {
  const name = (kind: string) => (surface === 'Key' ? `Metrics${kind}` : `AdminMetrics${kind}`);
  const bucket = z.object({
    start: timestamp.meta({ description: 'Natural start of the bucket (weeks start on Monday, UTC).' }),
    measures,
  });
  const row = z.object({
    key: z
      .string()
      .nullable()
      .meta({ description: 'Value of the dimension; null for events (or sessions’ first events) without the property.' }),
    measures,
  });
  return {
    summary: z
      .object({
        ...echoFields,
        measures,
        compare: z
          .object({ ...compareEcho, measures, change: changeValues })
          .optional()
          .meta({ description: 'With `compare`: the earlier period’s measures, and the change of each.' }),
      })
      .meta({ id: name('Summary'), description: 'Aggregate measures over the window.' }),
    timeseries: z
      .object({
        ...echoFields,
        interval: z.enum(INTERVALS),
        buckets: z.array(bucket).meta({
          description:
            'Every bucket that overlaps the window, in order, zero-filled. Point-in-time measures are taken at the bucket’s end.',
        }),
        compare: z
          .object({
            ...compareEcho,
            buckets: z.array(bucket).meta({
              description:
                'The earlier period’s buckets, as many as `buckets` and aligned by position: its own calendar’s buckets, cut or continued (empty) to the same count.',
            }),
          })
          .optional()
          .meta({ description: 'With `compare`: the earlier period in the same shape.' }),
      })
      .meta({ id: name('Timeseries'), description: 'Measures per time bucket.' }),
    breakdown: z
      .object({
        ...echoFields,
        dimension: z.string().meta({ description: 'The dimension as requested.' }),
        rows: z
          .array(
            row.extend({
              change: changeValues.optional().meta({
                description:
                  'With `compare`: the change of each measure against the earlier period’s row with the same key (null when it has none).',
              }),
            }),
          )
          .meta({ description: 'Rows by the first measure descending, then by key; at most `limit`.' }),
        compare: z
          .object({
            ...compareEcho,
            rows: z.array(row).meta({ description: 'The earlier period’s own top rows, ordered and limited like `rows`.' }),
          })
          .optional()
          .meta({ description: 'With `compare`: the earlier period in the same shape.' }),
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

export const EventPropertiesResponse = z
  .object({
    date_from: echoFields.date_from,
    date_to: echoFields.date_to,
    retention_clamped: echoFields.retention_clamped,
    properties: z
      .array(
        z.object({
          property: z
            .string()
            .meta({ description: 'The path as a filter names it: `properties.<key>[.<key>…]`.', example: 'properties.plan' }),
          types: z
            .array(z.string())
            .meta({ description: 'The JSON column’s types the values were stored as (String, Int64, Float64, Bool, Array(…), …).' }),
          top_values: z
            .array(
              z.object({
                value: z.union([z.string(), z.number(), z.boolean()]).meta({ description: 'A value as its JSON value.' }),
                count: count.meta({ description: 'Events in the window with this value.' }),
              }),
            )
            .meta({ description: 'The 10 most frequent scalar values, most frequent first (ties by text).' }),
        }),
      )
      .meta({ description: 'The paths seen, most frequent first, at most 100.' }),
  })
  .meta({ id: 'EventProperties', description: 'The event properties of a window.' });

export type MetricsResponseChecks = [
  Expect<SameShape<Result<typeof eventProperties>, Out<typeof EventPropertiesResponse>>>,
  Expect<Mutual<keyof typeof adminMeasureFields, Exclude<Measure, PropertyMeasure>>>,
  Expect<SameShape<Result<typeof metrics.summary>, Out<typeof AdminMetrics.summary>>>,
  Expect<SameShape<Result<typeof metrics.timeseries>, Out<typeof AdminMetrics.timeseries>>>,
  // The service's `dimension` is typed `string | undefined`, but a missing one is a 400 before any body is built.
  Expect<SameShape<Result<typeof metrics.breakdown> & { dimension: string }, Out<typeof AdminMetrics.breakdown>>>,
  Expect<SameShape<Result<typeof eventsFeed>, Out<typeof MetricsEventsFeed>>>,
];
