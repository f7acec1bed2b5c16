import { z } from 'zod';
import { ADMIN_MEASURES, EVENT_MEASURES, FEEDBACK_MEASURES, INTERVALS, type Measure } from '../../olap/metrics/measures.js';
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
          .meta({
            description:
              'Every bucket that overlaps the window, in order, zero-filled. Point-in-time measures are taken at the bucket’s end.',
          }),
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

export type MetricsResponseChecks = [
  Expect<Mutual<keyof Out<typeof AdminMeasureValues>, Measure>>,
  Expect<SameShape<Result<typeof metrics.summary>, Out<typeof AdminMetrics.summary>>>,
  Expect<SameShape<Result<typeof metrics.timeseries>, Out<typeof AdminMetrics.timeseries>>>,
  // The service's `dimension` is typed `string | undefined`, but a missing one is a 400 before any body is built.
  Expect<SameShape<Omit<Result<typeof metrics.breakdown>, 'dimension'> & { dimension: string }, Out<typeof AdminMetrics.breakdown>>>,
  Expect<SameShape<Result<typeof metrics.eventsFeed>, Out<typeof MetricsEventsFeed>>>,
];
