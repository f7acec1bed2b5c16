import { apiTime } from '../../core/time.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { filterCondition, propertyNumber } from '../filter-sql.js';
import { alignedBuckets, changeOf, comparedQuery } from './compare.js';
import * as eq from './events.queries.js';
import {
  ADMIN_SURFACE_MEASURES,
  type Interval,
  isEventMeasure,
  isFeedbackMeasure,
  isPropertyMeasure,
  isRawEventMeasure,
  isSessionMeasure,
  KEY_SURFACE_MEASURES,
  type Measure,
  type MeasureValues,
  type PropertyMeasure,
  propertyMeasureParts,
  SESSION_MEASURES,
  TRAILING_DAYS,
} from './measures.js';
import { MetricsError } from './metrics.errors.js';
import * as q from './metrics.queries.js';
import {
  type CommonQuery,
  checkFilters,
  customEventsReadable,
  DAY_MS,
  isoDay,
  lastDayOf,
  type MeasuredBucket,
  type MetricsTarget,
  prepare,
  type ResolvedQuery,
  requirePro,
} from './metrics.request.js';
import { sessionBreakdownRows, sessionBuckets, sessionEntryOf } from './session-measures.js';
import type { SessionEntry } from './sessions.queries.js';
import { type Bucket, bucketsOf } from './window.js';

export type { CommonQuery, Echo, MetricsTarget, Surface } from './metrics.request.js';

/**
 * Computes the measures for each bucket ('total' when the bucket is the whole window). Only the
 * queries the requested measures need are run, concurrently.
 */
async function measureBuckets(
  client: ClickHouseClient,
  p: ResolvedQuery,
  bucket: q.BucketSpec,
  buckets: MeasuredBucket[],
): Promise<Map<string, MeasureValues>> {
  const wants = (m: Measure) => p.measures.includes(m);
  const needFeedback = p.measures.some(isFeedbackMeasure);
  const needDeltas = wants('sdk_users') || wants('new_sdk_users') || wants('paying_users') || wants('total_mrr');
  const plan = eventPlan(p);
  const [rollup, raw, active, feedback, deltas, activeSdk, voters] = await Promise.all([
    plan.rollupCounts ? q.eventMeasures(client, p.scope, bucket, p.names) : [],
    plan.raw
      ? eq.rawEventMeasures(client, p.scope, { bucket, names: p.names, filter: plan.filter, math: plan.math, withUsers: plan.rawUsers })
      : [],
    plan.activeDays > 0
      ? eq.activeUsers(
          client,
          p.scope,
          activeSpec(
            p,
            plan,
            buckets.map((b) => b.lastDay),
          ),
        )
      : [],
    needFeedback ? q.feedbackMeasures(client, p.scope, bucket) : [],
    needDeltas ? q.sdkUserDeltas(client, p.scope, bucket) : [],
    wants('active_sdk_users') ? q.activeSdkUsers(client, p.scope, bucket) : [],
    wants('voter_mrr') ? q.voterMrr(client, p.scope, bucket) : [],
  ]);
  const byBucket = <T extends { bucket: string }>(list: T[]) => new Map(list.map((row) => [row.bucket, row]));
  const rollupBy = byBucket(rollup);
  const rawBy = byBucket(raw);
  const activeBy = new Map(active.map((row) => [row.last, row]));
  const feedbackBy = byBucket(feedback);
  const deltasBy = byBucket(deltas);
  const activeSdkBy = byBucket(activeSdk);
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
  for (const { start, lastDay } of buckets) {
    const f = feedbackBy.get(start);
    const d = deltasBy.get(start);
    users += Number(d?.new_users ?? 0);
    paying += Number(d?.paying_delta ?? 0);
    mrr += Number(d?.mrr_delta ?? 0);
    const all: Record<string, number | null> = {
      ...eventValues(plan, rollupBy.get(start) ?? rawBy.get(start), rawBy.get(start), activeBy.get(lastDay)),
      feedback_count: Number(f?.feedback_count ?? 0),
      vote_count: Number(f?.vote_count ?? 0),
      comment_count: Number(f?.comment_count ?? 0),
      sdk_users: users,
      new_sdk_users: Number(d?.new_users ?? 0),
      active_sdk_users: Number(activeSdkBy.get(start)?.active_sdk_users ?? 0),
      paying_users: paying,
      total_mrr: roundMoney(mrr),
      voter_mrr: roundMoney(Number(votersBy.get(start)?.voter_mrr ?? 0)),
    };
    result.set(start, Object.fromEntries(p.measures.map((m) => [m, all[m] ?? null])) as MeasureValues);
  }
  return result;
}

// --- The event measures: rollups, raw events and active users (docs/metrics.md, "Measures") ---

/** Which event queries a request needs: unfiltered counts stay on the rollups. */
type EventPlan = {
  rollupCounts: boolean;
  raw: boolean;
  rawUsers: boolean;
  filter: ReturnType<typeof filterCondition>;
  propertyMeasures: PropertyMeasure[];
  math: eq.MathColumn[];
  /** The longest trailing window of the active users asked (0: none asked). */
  activeDays: number;
};

function eventPlan(p: ResolvedQuery): EventPlan {
  const wants = (m: Measure) => p.measures.includes(m);
  const filtered = p.filters.length > 0;
  const counts = wants('event_count') || wants('unique_event_users') || wants('events_per_user');
  const users = wants('unique_event_users') || wants('events_per_user');
  const propertyMeasures = p.measures.filter(isPropertyMeasure);
  const math = propertyMeasures.map((measure, i) => {
    const { math, keys } = propertyMeasureParts(measure);
    return { math, number: propertyNumber(keys, { properties: 'json', prefix: `m${i}_` }) };
  });
  const activeDays = Math.max(0, ...(['dau', 'wau', 'mau'] as const).filter(wants).map((m) => TRAILING_DAYS[m]));
  return {
    rollupCounts: counts && !filtered,
    raw: math.length > 0 || (counts && filtered),
    rawUsers: users && filtered,
    filter: filterCondition(p.filters, { properties: 'json', prefix: 'f' }),
    propertyMeasures,
    math,
    activeDays,
  };
}

/**
 * The active users' query: each last day's trailing days, read from no earlier than the plan lets
 * this request read (the trailing days may reach before date_from, never before the allowance).
 */
function activeSpec(p: ResolvedQuery, plan: EventPlan, lasts: string[], dimension?: eq.KeyDimension) {
  // The last days are ISO dates (text order is time order) and come in order: the first is the earliest.
  const first = lasts[0] ?? isoDay(p.window.start);
  const reach = new Date(Date.parse(`${first}T00:00:00Z`) - (plan.activeDays - 1) * DAY_MS);
  return {
    readFrom: reach < p.floor ? p.floor : reach,
    lasts,
    days: plan.activeDays,
    names: p.names,
    filter: plan.filter,
    dimension,
    measures: (['dau', 'wau', 'mau'] as const).filter((m) => p.measures.includes(m)),
  };
}

type Counts = { event_count: number; unique_event_users: number };

/** The event family's values of one bucket or key, from whichever query answered each. */
function eventValues(
  plan: EventPlan,
  counts: Counts | undefined,
  raw: eq.RawEventRow | undefined,
  active: eq.ActiveUsersRow | undefined,
): Record<string, number | null> {
  const events = Number(counts?.event_count ?? 0);
  const users = Number(counts?.unique_event_users ?? 0);
  const values: Record<string, number | null> = {
    event_count: events,
    unique_event_users: users,
    events_per_user: users === 0 ? null : events / users,
    dau: active?.dau ?? 0,
    wau: active?.wau ?? 0,
    mau: active?.mau ?? 0,
  };
  plan.propertyMeasures.forEach((measure, i) => {
    values[measure] = raw?.math[i] ?? null;
  });
  return values;
}

/** The event, feedback and SDK-user measures and the session ones, per bucket, in the order requested. */
async function allMeasureBuckets(
  client: ClickHouseClient,
  target: MetricsTarget,
  query: CommonQuery,
  p: ResolvedQuery,
  bucket: q.BucketSpec,
  buckets: MeasuredBucket[],
): Promise<Map<string, MeasureValues>> {
  const starts = buckets.map((b) => b.start);
  const [values, sessions] = await Promise.all([
    measureBuckets(client, p, bucket, buckets),
    sessionBuckets(client, target, query, p, bucket, starts),
  ]);
  if (sessions.size === 0) return values;
  const merged = new Map<string, MeasureValues>();
  for (const start of starts) {
    const both: Record<string, unknown> = { ...values.get(start), ...sessions.get(start) };
    merged.set(start, Object.fromEntries(p.measures.map((m) => [m, both[m]])) as MeasureValues);
  }
  return merged;
}

/** A measure that answers null, not 0, where a row has no value: a ratio, a duration or property math. */
const nullWithoutValue = (m: Measure) => isPropertyMeasure(m) || m === 'events_per_user' || (isSessionMeasure(m) && m !== 'sessions');

/** The bucket sdkUserDeltas gives to facts before the window (the epoch). */
const BEFORE_WINDOW = new Date(0).toISOString();

/** Sums of floating MRR figures, rounded to a millionth to hide summation-order noise. */
const roundMoney = (value: number) => Math.round(value * 1e6) / 1e6;

export async function summary(client: ClickHouseClient, target: MetricsTarget, query: CommonQuery) {
  const p = prepare(target, query);
  await checkFilters(client, p.filters);
  const measureWindow = async (r: ResolvedQuery) => {
    const start = r.window.start.toISOString();
    const values = await allMeasureBuckets(client, target, query, r, 'total', [{ start, lastDay: r.window.dateTo }]);
    return values.get(start) ?? {};
  };
  const earlier = query.compare ? comparedQuery(p, query.compare) : undefined;
  const [measures, before] = await Promise.all([measureWindow(p), earlier ? measureWindow(earlier.p) : undefined]);
  const answer = { ...p.echo, measures };
  if (!earlier || !before) return answer;
  return { ...answer, compare: { ...earlier.block, measures: before, change: changeOf(p.measures, measures, before) } };
}

export async function timeseries(
  client: ClickHouseClient,
  target: MetricsTarget,
  query: CommonQuery & { interval?: Interval | undefined },
) {
  const interval = query.interval ?? 'day';
  const p = prepare(target, query);
  const buckets = bucketsOf(p.window, interval);
  await checkFilters(client, p.filters);
  const earlier = query.compare ? comparedQuery(p, query.compare) : undefined;
  // The earlier period's buckets, as many as the main answer's, aligned by position: its own
  // calendar's buckets, cut or continued to the same count (they differ by one at most, for week
  // and month buckets of a previous_period whose length is not whole weeks or months).
  const earlierBuckets = earlier ? alignedBuckets(earlier.p.window, interval, buckets.length) : [];
  const measureAll = async (r: ResolvedQuery, list: Bucket[]) => {
    const values = await allMeasureBuckets(
      client,
      target,
      query,
      r,
      interval,
      list.map((b) => ({ start: b.start.toISOString(), lastDay: lastDayOf(b.to) })),
    );
    return list.map((b) => ({ start: apiTime(b.start), measures: values.get(b.start.toISOString()) ?? {} }));
  };
  const [main, before] = await Promise.all([measureAll(p, buckets), earlier ? measureAll(earlier.p, earlierBuckets) : undefined]);
  const answer = { ...p.echo, interval, buckets: main };
  if (!earlier || !before) return answer;
  return { ...answer, compare: { ...earlier.block, buckets: before } };
}

/**
 * `dimension` is `event_name`, `category`, `status`, `property.<key>`, or for the session measures
 * `entry_event` or `entry.property.<key>` (checked by the route's schema).
 */
export type BreakdownQuery = CommonQuery & { dimension: string; limit?: number | undefined };

type BreakdownRow = { key: string | null; measures: MeasureValues };

export async function breakdown(client: ClickHouseClient, target: MetricsTarget, query: BreakdownQuery) {
  const dimension = query.dimension;
  const property = dimension.startsWith('property.') ? dimension.slice('property.'.length) : undefined;
  const entry = sessionEntryOf(dimension);
  const kind: 'event' | 'feedback' | 'session' =
    entry !== undefined ? 'session' : dimension === 'event_name' || property !== undefined ? 'event' : 'feedback';
  if (dimension === 'event_name' && !customEventsReadable(target.plan)) requirePro('a breakdown by event name');
  const limit = query.limit ?? 10;
  const splittable =
    kind === 'session'
      ? isSessionMeasure
      : kind === 'event'
        ? (m: Measure) => isEventMeasure(m) || isRawEventMeasure(m)
        : isFeedbackMeasure;
  const defaults = kind === 'session' ? SESSION_MEASURES : target.surface === 'admin' ? ADMIN_SURFACE_MEASURES : KEY_SURFACE_MEASURES;
  const p = prepare(target, query, defaults.filter(splittable));
  const unsplittable = p.measures.filter((m) => !splittable(m));
  if (unsplittable.length > 0) {
    throw new MetricsError('METRICS_MEASURE_NOT_SPLITTABLE', `${unsplittable.join(', ')} cannot be split by ${dimension}`);
  }
  await checkFilters(client, p.filters);
  const keyDimension: eq.KeyDimension | undefined =
    kind !== 'event' ? undefined : property !== undefined ? { kind: 'property', key: property } : { kind: 'event_name' };
  const rowsOf = (r: ResolvedQuery) => breakdownRows(client, r, dimension, keyDimension, entry && { target, query, entry });
  const earlier = query.compare ? comparedQuery(p, query.compare) : undefined;
  const [rows, before] = await Promise.all([rowsOf(p), earlier ? rowsOf(earlier.p) : undefined]);
  const answer = { ...p.echo, dimension };
  if (!earlier || !before) return { ...answer, rows: rows.slice(0, limit) };
  const beforeBy = new Map(before.map((row) => [row.key, row.measures]));
  return {
    ...answer,
    rows: rows.slice(0, limit).map((row) => ({ ...row, change: changeOf(p.measures, row.measures, beforeBy.get(row.key) ?? {}) })),
    compare: { ...earlier.block, rows: before.slice(0, limit) },
  };
}

/** Every row of a breakdown, by the first measure descending; ties by key, the "no value" row last. */
async function breakdownRows(
  client: ClickHouseClient,
  p: ResolvedQuery,
  dimension: string,
  keyDimension: eq.KeyDimension | undefined,
  session: { target: MetricsTarget; query: CommonQuery; entry: SessionEntry } | undefined,
): Promise<BreakdownRow[]> {
  let rows: { key: string | null; values: Record<string, number | null> }[];
  if (session) {
    rows = await sessionBreakdownRows(client, session.target, session.query, p, session.entry);
  } else if (!keyDimension) {
    rows = (await q.feedbackMeasuresBy(client, p.scope, dimension as 'category' | 'status')).map(({ key, ...values }) => ({
      key,
      values: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, Number(v)])),
    }));
  } else {
    rows = await eventBreakdownRows(client, p, keyDimension);
  }
  const first = p.measures[0] as Measure;
  const rank = (value: number | null | undefined) => (value === null || value === undefined ? Number.NEGATIVE_INFINITY : value);
  rows.sort(
    (a, b) =>
      rank(b.values[first]) - rank(a.values[first]) ||
      (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) ||
      (String(a.key) < String(b.key) ? -1 : String(a.key) > String(b.key) ? 1 : 0),
  );
  return rows.map((row) => ({
    key: row.key,
    measures: Object.fromEntries(
      p.measures.map((m) => [m, row.values[m] !== undefined ? row.values[m] : nullWithoutValue(m) ? null : 0]),
    ) as MeasureValues,
  }));
}

/** The event measures per event name or property value: rollups when unfiltered counts suffice. */
async function eventBreakdownRows(
  client: ClickHouseClient,
  p: ResolvedQuery,
  dimension: eq.KeyDimension,
): Promise<{ key: string | null; values: Record<string, number | null> }[]> {
  const plan = eventPlan(p);
  const [counts, raw, active] = await Promise.all([
    plan.rollupCounts
      ? dimension.kind === 'property'
        ? q.eventMeasuresByProperty(client, p.scope, p.names, dimension.key)
        : q.eventMeasuresByName(client, p.scope, p.names)
      : [],
    plan.raw
      ? eq.rawEventMeasures(client, p.scope, {
          bucket: 'total',
          names: p.names,
          filter: plan.filter,
          math: plan.math,
          withUsers: plan.rawUsers,
          dimension,
        })
      : [],
    plan.activeDays > 0 ? eq.activeUsers(client, p.scope, activeSpec(p, plan, [p.window.dateTo], dimension)) : [],
  ]);
  const countsBy = new Map(counts.map((row) => [row.key, row]));
  const rawBy = new Map(raw.map((row) => [row.key, row]));
  const activeBy = new Map(active.map((row) => [row.key, row]));
  // A key is a row when an event of the window has it; the active users' trailing days before
  // the window add no row of their own.
  const keys = new Set([...countsBy.keys(), ...rawBy.keys()]);
  if (!plan.rollupCounts && !plan.raw) for (const key of activeBy.keys()) keys.add(key);
  return [...keys].map((key) => ({
    key,
    values: eventValues(plan, countsBy.get(key) ?? rawBy.get(key), rawBy.get(key), activeBy.get(key)),
  }));
}
