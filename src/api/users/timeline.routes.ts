import { z } from 'zod';
import {
  decodeTimelineCursor,
  EVENTS_PER_SESSION,
  TIMELINE_DEFAULT_LIMIT,
  TIMELINE_MAX_LIMIT,
  userTimeline,
} from '../../olap/metrics/timeline.js';
import { EARLIEST_DAY, LATEST_DAY } from '../../olap/metrics/window.js';
import { defineRoute } from '../define-route.js';
import { anyValues } from '../shared/any-values.js';
import { defaultError, describe, json, ProjectPath } from '../shared/building-blocks.js';
import { ErrorBody, MetricsErrorBody } from '../shared/errors.responses.js';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, Result, SameShape } from '../shared/shape-checks.js';

// The user timeline (issue 38, docs/sessions.md "The user timeline"): one SDK user's sessions.

const TimelinePath = ProjectPath.extend({
  userId: describe(z.string().min(1, 'user not found').max(1000, 'user not found'), 'The client app’s user id (`user_id`), URL-encoded.'),
});

const LIMIT_MESSAGE = `limit must be an integer from 1 to ${TIMELINE_MAX_LIMIT}`;

const TimelineQuery = z.object({
  date_from: describe(
    z.string().optional(),
    `First day, \`YYYY-MM-DD\`, UTC, inclusive; default 29 days before \`date_to\`. Clamped to the plan’s window as the metrics are (\`retention_clamped\`); ${EARLIEST_DAY} to ${LATEST_DAY} (400 \`METRICS_INVALID_DATE\` otherwise).`,
  ),
  date_to: describe(z.string().optional(), 'Last day, `YYYY-MM-DD`, UTC, inclusive; default today.'),
  limit: describe(
    z
      .preprocess(
        (value) => (typeof value === 'string' ? (/^\d+$/.test(value) ? Number(value) : Number.NaN) : value),
        z.number({ error: LIMIT_MESSAGE }).int(LIMIT_MESSAGE).min(1, LIMIT_MESSAGE).max(TIMELINE_MAX_LIMIT, LIMIT_MESSAGE),
      )
      .optional()
      .meta({ default: TIMELINE_DEFAULT_LIMIT }),
    `At most this many sessions, 1 to ${TIMELINE_MAX_LIMIT}.`,
  ),
  cursor: describe(
    z
      .string()
      .transform((value, ctx) => {
        const cursor = decodeTimelineCursor(value);
        if (cursor) return cursor;
        ctx.issues.push({ code: 'custom', input: value, message: 'is not one this API returned' });
        return z.NEVER;
      })
      .optional(),
    'The `next_cursor` of the previous page.',
  ),
});

const TimelineEvent = z.object({
  id: uuid,
  event_name: z.string(),
  properties: z.record(z.string(), z.unknown()).meta(anyValues).nullable().meta({ description: 'The properties object as sent, or null.' }),
  created_at: timestamp,
});

const TimelineResponse = z
  .object({
    date_from: z.iso.date().meta({ description: 'First day of the window actually applied (UTC, inclusive).' }),
    date_to: z.iso.date().meta({ description: 'Last day of the window actually applied (UTC, inclusive).' }),
    retention_clamped: z.boolean().meta({ description: 'True when the plan narrowed the requested window (still a 200).' }),
    user_id: z.string(),
    sessions: z
      .array(
        z.object({
          started_at: timestamp.meta({ description: 'The session’s first event (whole seconds).' }),
          ended_at: timestamp.meta({ description: 'The session’s last event (whole seconds).' }),
          duration_seconds: z.number().min(0).meta({ description: 'Last event minus first, to the millisecond.' }),
          event_count: count.min(1).meta({ description: 'Events in the session (in the window and the plan’s scope).' }),
          events: z.array(TimelineEvent).meta({ description: `In time order (ties by id); at most the first ${EVENTS_PER_SESSION}.` }),
          events_truncated: z
            .boolean()
            .meta({ description: `True when the session has more than the ${EVENTS_PER_SESSION} events listed.` }),
        }),
      )
      .meta({ description: 'Newest first.' }),
    next_cursor: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null on the last page.' }),
  })
  .meta({ id: 'UserTimeline', description: 'One SDK user’s sessions in the window, newest first, each with its events.' });

export type TimelineResponseChecks = [Expect<SameShape<Result<typeof userTimeline>, Out<typeof TimelineResponse>>>];

export const timelineRoutes = [
  defineRoute({
    method: 'get',
    path: '/projects/:id/users/:userId/timeline',
    auth: 'projectAdmin',
    errorBody: 'metrics',
    operationId: 'userTimeline',
    tags: ['Users'],
    summary: 'One user’s sessions, newest first, with their events',
    description:
      'Sessions as the session measures form them (docs/sessions.md): runs of the user’s events with no gap longer than the project’s `session_timeout_minutes`, from the events in the window only (a session crossing the window’s edge shows its part inside). Paged by `cursor`, window-clamped like the events feed; below Pro only the predefined events are read. A user with no events in the window answers an empty list.',
    params: TimelinePath,
    query: TimelineQuery,
    responses: {
      200: json('The sessions.', TimelineResponse),
      400: json(
        '`METRICS_INVALID_DATE`, `METRICS_INVALID_RANGE`, `METRICS_INVALID_PARAMETER` (a bad `limit` or `cursor`, named in the message), in the metrics body; a path segment no store can hold (NUL) in the server-wide body, as on every route outside `/metrics`.',
        z.union([MetricsErrorBody, ErrorBody]),
      ),
      default: defaultError,
    },
    handler: async (ctx, { clickhouse }, { project, params, query }) => {
      ctx.body = await userTimeline(
        clickhouse,
        { projectId: project.id, plan: project.plan, surface: 'admin', sessionTimeoutMinutes: project.session_timeout_minutes },
        params.userId,
        query,
      );
    },
  }),
];
