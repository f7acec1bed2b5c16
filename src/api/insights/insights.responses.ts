// Response schemas of the insights routes (docs/insights.md), read by insights.routes.ts.
import { z } from 'zod';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';

const PREDEFINED = PREDEFINED_EVENTS.map((name) => `\`${name}\``).join(', ');

/** SPEC 2.8's echo fields, which every insights answer carries. */
const echo = {
  event_scope: z.enum(['all', 'predefined_only']).meta({ description: `\`predefined_only\` below Pro: only ${PREDEFINED} were read.` }),
  retention_clamped: z.boolean().meta({ description: 'True when the plan narrowed the requested window (still a 200).' }),
  retention_window_days: z.number().int().min(1).meta({ description: 'The plan’s allowance in days.' }),
  date_from: z.iso.date().meta({ description: 'First day of the window actually applied (UTC, inclusive).' }),
  date_to: z.iso.date().meta({ description: 'Last day of the window actually applied (UTC, inclusive).' }),
};

const FunnelStepResult = z
  .object({
    event_name: z.string(),
    users: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Users who did steps 1 to this one in order within the conversion window (docs/insights.md).' }),
    conversion_from_first: z.number().nullable().meta({ description: 'users / users of step 1; null when step 1 has none.' }),
    conversion_from_previous: z
      .number()
      .nullable()
      .meta({ description: 'users / users of the previous step; null for step 1, or when the previous step has none.' }),
    median_seconds_to_convert: z.number().nullable().meta({
      description:
        'Exact median, over the users who reached this step, of the seconds from their step 1 to their first completion of this step; null for step 1 and when nobody reached it.',
    }),
  })
  .meta({ id: 'FunnelStepResult' });

export const FunnelResult = z
  .object({
    ...echo,
    conversion_window_seconds: z.number().int(),
    breakdown: z.string().nullable().meta({ description: 'The property the funnel was split by, or null.' }),
    steps: z.array(FunnelStepResult),
    breakdown_values: z
      .array(
        z.object({
          value: z
            .string()
            .nullable()
            .meta({ description: 'A string as it is, another JSON value as its JSON text; null: the property is missing.' }),
          steps: z.array(FunnelStepResult),
        }),
      )
      .meta({ description: 'With `breakdown`: the funnel of the events carrying each value, most users at step 1 first; else empty.' }),
    compare: z
      .object({
        date_from: z.iso.date().meta({ description: 'First day of the earlier window as applied (UTC, inclusive).' }),
        date_to: z.iso.date().meta({ description: 'Last day of the earlier window (UTC, inclusive).' }),
        retention_clamped: z.boolean().meta({
          description:
            'True when the plan’s allowance (counted back from date_to) cut the earlier window: nothing before it was read (and nothing at all when the whole window lies before it: every step then has 0 users).',
        }),
        steps: z
          .array(FunnelStepResult)
          .meta({ description: 'The funnel of the earlier window, the same steps, filters and conversion window.' }),
      })
      .optional()
      .meta({ description: 'Only with `compare` in the request: the earlier period’s funnel (docs/insights.md, "Compare").' }),
  })
  .meta({ id: 'FunnelResult' });

export const RetentionResult = z
  .object({
    ...echo,
    interval: z.enum(['day', 'week']),
    periods: z.number().int(),
    cohort_event: z.string().nullable(),
    return_event: z.string().nullable(),
    cohorts: z.array(
      z.object({
        cohort_start: z.iso.date().meta({ description: 'First day of the cohort’s day or week (weeks start on Monday, UTC).' }),
        users: z.number().int().min(0).meta({ description: 'Users whose first cohort event in the window falls in it (= retained[0]).' }),
        retained: z.array(z.number().int().min(0)).meta({
          description:
            'Users of the cohort with a return event in period 0, 1, …: period p is the p-th day or week after the cohort’s own. Periods that start after date_to are left out.',
        }),
      }),
    ),
  })
  .meta({ id: 'RetentionResult' });

export const PathsResult = z
  .object({
    ...echo,
    start_event: z
      .string()
      .nullable()
      .meta({ description: 'The paths start at each user’s first event of this name; null when not given.' }),
    end_event: z.string().nullable().meta({ description: 'The paths end at each user’s last event of this name; null when not given.' }),
    depth: z.number().int().min(2).max(6).meta({ description: 'At most this many event names per path.' }),
    limit: z.number().int().min(1).max(200).meta({ description: 'At most this many edges are listed.' }),
    exclude_events: z.array(z.string()).meta({ description: 'Names left out of every path (before repeats are collapsed).' }),
    users: z.number().int().min(0).meta({
      description: 'Users with a path: every user with an event in the window (after the exclusions), or with the start or end event.',
    }),
    edges: z
      .array(
        z.object({
          step: z.number().int().min(2).meta({ description: 'Position of `to` in the path: 2 is the first move.' }),
          from: z.string(),
          to: z.string(),
          users: z
            .number()
            .int()
            .min(1)
            .meta({ description: 'Users whose path has `from` at position step − 1 and `to` at position step.' }),
        }),
      )
      .meta({ description: 'Moves between names, most users first (ties by step, then the names in byte order), at most `limit`.' }),
    paths: z
      .array(z.object({ events: z.array(z.string()).min(1), users: z.number().int().min(1) }))
      .meta({ description: 'The 10 whole paths with the most users (ties by the names in byte order), one-name paths included.' }),
  })
  .meta({ id: 'PathsResult' });

export const EventNamesResult = z
  .object({
    ...echo,
    event_names: z.array(
      z.object({
        event_name: z.string(),
        event_count: z.number().int().min(0),
        predefined: z.boolean().meta({ description: `One of ${PREDEFINED}.` }),
      }),
    ),
  })
  .meta({ id: 'EventNamesResult' });

const ImpactSpan = z.object({ users: z.number().int().min(0), events: z.number().int().min(0) });
export const ImpactResult = z
  .object({
    ...echo,
    feedback_id: z.uuid(),
    event_names: z.array(z.string()),
    days: z.number().int(),
    shipped_at: z
      .string()
      .nullable()
      .meta({ description: 'When the item last became `completed` (RFC 3339, whole seconds); null while it is not completed.' }),
    voters: z.number().int().min(0).meta({ description: 'Users with a vote on the item now.' }),
    voters_adopted: z.number().int().min(0).nullable().meta({ description: 'Voters with a linked event in the days after shipped_at.' }),
    voters_adopted_mrr: z.number().nullable().meta({ description: 'The sum of those voters’ current MRR.' }),
    adoption_share: z.number().nullable().meta({ description: 'after.users / after.active_users; null without active users.' }),
    before: ImpactSpan.nullable().meta({ description: 'Users and events of the linked names in the `days` days before shipped_at.' }),
    after: ImpactSpan.extend({
      active_users: z.number().int().min(0).meta({ description: 'Users with any event (in scope) in that span.' }),
    })
      .nullable()
      .meta({ description: 'The same in the `days` days from shipped_at.' }),
    series: z.array(z.object({ date: z.iso.date(), users: z.number().int().min(0), events: z.number().int().min(0) })).meta({
      description: 'The linked events per UTC day from date_from to date_to; empty before shipping.',
    }),
  })
  .meta({ id: 'ImpactResult' });

export const ShipDatesResult = z
  .object({
    ...echo,
    items: z.array(
      z.object({
        feedback_id: z.uuid(),
        title: z.string(),
        shipped_at: z.string().meta({ description: 'When the item last became `completed` (RFC 3339, whole seconds).' }),
      }),
    ),
  })
  .meta({ id: 'ShipDatesResult' });

export const SavedQuery = z
  .object({
    id: z.uuid(),
    name: z.string(),
    sql: z.string(),
    created_by: z.string().meta({ description: 'Email of the token’s holder.' }),
    created_at: z.string(),
  })
  .meta({ id: 'SavedQuery' });
