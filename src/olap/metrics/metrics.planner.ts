import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import { apiTime } from '../../core/time.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { clickhouseTimeToIso } from '../time.js';
import {
  ADMIN_SURFACE_MEASURES,
  type Interval,
  isEventMeasure,
  isFeedbackMeasure,
  isPredefinedEvent,
  KEY_SURFACE_MEASURES,
  type Measure,
  type MeasureValues,
  PREDEFINED_EVENTS,
} from './measures.js';
import { MetricsError } from './metrics.errors.js';
import * as q from './metrics.queries.js';
import { bucketsOf, type MetricsWindow, resolveWindow } from './window.js';

/** Which credential asked: the API key's surface lacks the SDK-user and revenue measures. */
export type Surface = 'key' | 'admin';

export type MetricsTarget = { projectId: string; plan: Plan; surface: Surface };

/** What every metrics response echoes (SPEC 2.8). */
export type Echo = {
  event_scope: 'all' | 'predefined_only';
  retention_clamped: boolean;
  retention_window_days: number;
  date_from: string;
  date_to: string;
};

/**
 * A request's query as the route validated it (src/api/metrics/metrics.schema.ts): dates as
 * `YYYY-MM-DD`, `event` 1 to 100 characters, measures known names, once each. What depends on the
 * plan, the surface or the window as a whole is checked here.
 */
export type CommonQuery = {
  date_from?: string | undefined;
  date_to?: string | undefined;
  measures?: readonly Measure[] | undefined;
  event?: string | undefined;
};

type ResolvedQuery = { window: MetricsWindow; echo: Echo; scope: q.Scope; names: q.NameFilter; measures: Measure[] };

const customEventsReadable = (plan: Plan) => PLAN_LIMITS[plan].customEventsReadable;

function requirePro(what: string): never {
  throw new MetricsError('METRICS_CUSTOM_EVENTS_REQUIRE_PRO', `${what} requires the Pro or Team plan`);
}

/**
 * The window, scope and measure list of a request, with the plan's effects: custom event names
 * excluded below Pro (event_scope predefined_only), the window clamped to the plan's allowance,
 * and the 402 for an `event` filter naming a custom event below Pro.
 */
function prepare(target: MetricsTarget, query: CommonQuery, fallback?: readonly Measure[]): ResolvedQuery {
  const window = resolveWindow(query, target.plan);
  const allNames = customEventsReadable(target.plan);
  if (query.event !== undefined && !allNames && !isPredefinedEvent(query.event)) {
    requirePro(`filtering by the custom event "${query.event}"`);
  }
  const names: q.NameFilter = query.event !== undefined ? [query.event] : allNames ? null : [...PREDEFINED_EVENTS];
  const surfaceMeasures = target.surface === 'admin' ? ADMIN_SURFACE_MEASURES : KEY_SURFACE_MEASURES;
  return {
    window,
    scope: { projectId: target.projectId, start: window.start, end: window.end },
    names,
    measures: [...(query.measures ?? fallback ?? surfaceMeasures)],
    echo: {
      event_scope: allNames ? 'all' : 'predefined_only',
      retention_clamped: window.retentionClamped,
      retention_window_days: window.retentionWindowDays,
      date_from: window.dateFrom,
      date_to: window.dateTo,
    },
  };
}

/**
 * Computes the measures for each bucket start in `starts` ('total' when the bucket is the whole
 * window). Only the queries the requested measures need are run, concurrently.
 */
async function measureBuckets(
  client: ClickHouseClient,
  p: ResolvedQuery,
  bucket: q.BucketSpec,
  starts: string[],
): Promise<Map<string, MeasureValues>> {
  const wants = (m: Measure) => p.measures.includes(m);
  const needEvents = p.measures.some(isEventMeasure);
  const needFeedback = p.measures.some(isFeedbackMeasure);
  const needDeltas = wants('sdk_users') || wants('new_sdk_users') || wants('paying_users') || wants('total_mrr');
  const [events, feedback, deltas, active, voters] = await Promise.all([
    needEvents ? q.eventMeasures(client, p.scope, bucket, p.names) : [],
    needFeedback ? q.feedbackMeasures(client, p.scope, bucket) : [],
    needDeltas ? q.sdkUserDeltas(client, p.scope, bucket) : [],
    wants('active_sdk_users') ? q.activeSdkUsers(client, p.scope, bucket) : [],
    wants('voter_mrr') ? q.voterMrr(client, p.scope, bucket) : [],
  ]);
  const byBucket = <T extends { bucket: string }>(list: T[]) => new Map(list.map((row) => [row.bucket, row]));
  const eventsBy = byBucket(events);
  const feedbackBy = byBucket(feedback);
  const deltasBy = byBucket(deltas);
  const activeBy = byBucket(active);
  const votersBy = byBucket(voters);

  // The point-in-time measures run from the state before the window (the '1970' bucket).
  let users = 0;
  let paying = 0;
  let mrr = 0;
  for (const row of deltas) {
    if (row.bucket === BEFORE_WINDOW) {
      users += Number(row.new_users);
      paying += Number(row.paying_delta);
      mrr += Number(row.mrr_delta);
    }
  }
  const result = new Map<string, MeasureValues>();
  for (const start of starts) {
    const e = eventsBy.get(start);
    const f = feedbackBy.get(start);
    const d = deltasBy.get(start);
    users += Number(d?.new_users ?? 0);
    paying += Number(d?.paying_delta ?? 0);
    mrr += Number(d?.mrr_delta ?? 0);
    const all: Record<Measure, number> = {
      event_count: Number(e?.event_count ?? 0),
      unique_event_users: Number(e?.unique_event_users ?? 0),
      feedback_count: Number(f?.feedback_count ?? 0),
      vote_count: Number(f?.vote_count ?? 0),
      comment_count: Number(f?.comment_count ?? 0),
      sdk_users: users,
      new_sdk_users: Number(d?.new_users ?? 0),
      active_sdk_users: Number(activeBy.get(start)?.active_sdk_users ?? 0),
      paying_users: paying,
      total_mrr: roundMoney(mrr),
      voter_mrr: roundMoney(Number(votersBy.get(start)?.voter_mrr ?? 0)),
    };
    result.set(start, Object.fromEntries(p.measures.map((m) => [m, all[m]])) as MeasureValues);
  }
  return result;
}

/** The bucket sdkUserDeltas gives to facts before the window (the epoch). */
const BEFORE_WINDOW = new Date(0).toISOString();

/** Sums of floating MRR figures, rounded to a millionth to hide summation-order noise. */
const roundMoney = (value: number) => Math.round(value * 1e6) / 1e6;

export async function summary(client: ClickHouseClient, target: MetricsTarget, query: CommonQuery) {
  const p = prepare(target, query);
  const start = p.window.start.toISOString();
  const values = await measureBuckets(client, p, 'total', [start]);
  return { ...p.echo, measures: values.get(start) ?? {} };
}

export async function timeseries(
  client: ClickHouseClient,
  target: MetricsTarget,
  query: CommonQuery & { interval?: Interval | undefined },
) {
  const interval = query.interval ?? 'day';
  const p = prepare(target, query);
  const buckets = bucketsOf(p.window, interval);
  const starts = buckets.map((b) => b.start.toISOString());
  const values = await measureBuckets(client, p, interval, starts);
  return {
    ...p.echo,
    interval,
    buckets: buckets.map((b) => ({ start: apiTime(b.start), measures: values.get(b.start.toISOString()) ?? {} })),
  };
}

/** `dimension` is `event_name`, `category`, `status` or `property.<key>` (checked by the route's schema). */
export type BreakdownQuery = CommonQuery & { dimension: string; limit?: number | undefined };

export async function breakdown(client: ClickHouseClient, target: MetricsTarget, query: BreakdownQuery) {
  const dimension = query.dimension;
  const property = dimension.startsWith('property.') ? dimension.slice('property.'.length) : undefined;
  const kind: 'event' | 'feedback' = dimension === 'event_name' || property !== undefined ? 'event' : 'feedback';
  if (dimension === 'event_name' && !customEventsReadable(target.plan)) requirePro('a breakdown by event name');
  const limit = query.limit ?? 10;
  const splittable = kind === 'event' ? isEventMeasure : isFeedbackMeasure;
  const p = prepare(target, query, (target.surface === 'admin' ? ADMIN_SURFACE_MEASURES : KEY_SURFACE_MEASURES).filter(splittable));
  const unsplittable = p.measures.filter((m) => !splittable(m));
  if (unsplittable.length > 0) {
    throw new MetricsError('METRICS_MEASURE_NOT_SPLITTABLE', `${unsplittable.join(', ')} cannot be split by ${dimension}`);
  }
  const rows: { key: string | null; values: Record<string, number> }[] = (
    kind === 'event'
      ? property !== undefined
        ? await q.eventMeasuresByProperty(client, p.scope, p.names, property)
        : await q.eventMeasuresByName(client, p.scope, p.names)
      : await q.feedbackMeasuresBy(client, p.scope, dimension as 'category' | 'status')
  ).map(({ key, ...values }) => ({ key, values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Number(v)])) }));
  const first = p.measures[0] as Measure;
  // First measure descending; ties by key, the "no value" row last, so the order is stable.
  rows.sort(
    (a, b) =>
      (b.values[first] ?? 0) - (a.values[first] ?? 0) ||
      (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) ||
      (String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : 0),
  );
  return {
    ...p.echo,
    dimension,
    rows: rows.slice(0, limit).map((row) => ({
      key: row.key,
      measures: Object.fromEntries(p.measures.map((m) => [m, row.values[m] ?? 0])) as MeasureValues,
    })),
  };
}

/** `measures` is the raw parameter, only to refuse it (the feed has none). */
export type FeedQuery = Omit<CommonQuery, 'measures'> & {
  measures?: string | undefined;
  limit?: number | undefined;
  cursor?: Cursor | undefined;
  user_id?: string | undefined;
};

export type Cursor = { createdAt: string; eventId: string };
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify([cursor.createdAt, cursor.eventId])).toString('base64url');

/** The position a `next_cursor` names, or undefined for a string this API did not return. */
export function decodeCursor(value: string): Cursor | undefined {
  try {
    const [createdAt, eventId] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof eventId === 'string' && CURSOR_TIME.test(createdAt) && UUID.test(eventId)) {
      return { createdAt, eventId };
    }
  } catch {
    // not base64url JSON: not one of ours
  }
  return undefined;
}

/** The raw event feed (Pro and Team): newest first, paged by an opaque cursor. */
export async function eventsFeed(client: ClickHouseClient, target: MetricsTarget, query: FeedQuery) {
  if (!customEventsReadable(target.plan)) requirePro('the raw event feed');
  if (query.measures !== undefined) {
    throw new MetricsError('METRICS_INVALID_PARAMETER', 'the events feed takes no measures');
  }
  // `measures` is undefined here (refused above). The parameters are read in the order they are
  // checked: the route validates each when it is first read.
  const p = prepare(target, query as CommonQuery, []);
  const limit = query.limit ?? 100;
  const after = query.cursor;
  const userId = query.user_id;
  const rows = await q.eventFeed(client, p.scope, { event: query.event, userId, after }, limit);
  const last = rows.at(-1);
  return {
    ...p.echo,
    events: rows.map((row) => ({
      id: row.id,
      event_name: row.event_name,
      user_id: row.user_id,
      properties: row.properties_raw === '' ? null : (JSON.parse(row.properties_raw) as Record<string, unknown>),
      created_at: apiTime(clickhouseTimeToIso(row.created)),
    })),
    next_cursor: rows.length === limit && last ? encodeCursor({ createdAt: last.created, eventId: last.id }) : null,
  };
}
