/**
 * Property-based proof of the metrics API (issue 5, first "Proof" bullet): random projects on
 * every plan, events (predefined and custom names, spread over 400 days), feedback items with
 * status changes, votes (added and removed), comments, and SDK users whose MRR changes over time.
 * Every measure of every operation (summary, timeseries on each interval, breakdown on each
 * dimension, the events feed), on both surfaces (X-API-Key and the admin bearer token), equals a
 * plain recomputation in TypeScript from the same generated data, and so do the echo fields.
 *
 * Facts carry PostgreSQL commit time when they come through the outbox, so facts with times spread
 * over 400 days are written straight into ClickHouse (insertFacts) for a fresh project. Events are
 * written with insertEvents (which feeds the rollup materialized views like any insert) or, in
 * one property, through POST /events/batch with client timestamps: the real ingestion path.
 *
 * The model below is deliberately independent of src/: window, buckets and measures are
 * recomputed from their definitions (issue 5; SPEC 2.8, 4.10, 6, 7.4, 8.2, 8.3):
 * - window: whole UTC days date_from..date_to inclusive, default the 30 days ending today,
 *   clamped to the plan's allowance (free/pro 30, team 365) keeping date_to;
 * - event measures count only the predefined names on Free, every name on Pro and Team; the
 *   `event` filter restricts them to one name;
 * - feedback_count: items created; vote_count: votes added net of removals; comment_count;
 * - sdk_users: first registration before the bucket's end; new_sdk_users: first registration in
 *   the bucket; active_sdk_users: a registration in the bucket; paying_users / total_mrr: each
 *   user's latest MRR (by time, then fact id; null is 0) before the bucket's end; voter_mrr: the
 *   same sum over the users who added a vote in the bucket;
 * - timeseries: every hour/day/week (Monday)/month bucket (UTC) overlapping the window, each
 *   measured over its part of the window; point-in-time measures at the clipped bucket end;
 * - breakdown: event measures by event_name or property.<key> (string values as they are, other
 *   values as their JSON text, a missing key as null); feedback measures by category or by status
 *   as of the window's end; rows by the first measure descending, ties by key, null last;
 * - events feed: newest first (ties in the order ClickHouse sorts UUIDs), paged by cursor.
 */

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import type { FactKind, FactRow } from '../../src/core/fact.js';
import type { Plan } from '../../src/core/plans.js';
import { apiTime } from '../../src/core/time.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { insertFacts } from '../../src/olap/tables/facts.table.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { cases, caseTimeLimit } from '../helpers/generated-cases.js';
import { eventually } from '../helpers/redis.js';
import { type HttpResponse, useTestServer } from '../helpers/server.js';

const server = useTestServer();

// ---------------------------------------------------------------------------------------------
// Vocabulary (restated here on purpose: the model must not borrow the implementation's lists)

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const DAY_US = DAY_MS * 1000;
const HOUR_US = HOUR_MS * 1000;

const PREDEFINED = ['feedback_list', 'feedback_detail', 'submit_feedback'] as const;
const CUSTOM = ['checkout', 'custom_open', 'zeta_event'] as const;
const EVENT_NAMES: readonly string[] = [...PREDEFINED, ...CUSTOM];
const USERS = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5'] as const;
const CATEGORIES = ['feature_request', 'bug_report', 'improvement', 'other'] as const;
const STATUSES = ['pending', 'approved', 'in_progress', 'testflight', 'completed', 'rejected'] as const;

const EVENT_MEASURES = ['event_count', 'unique_event_users'] as const;
const FEEDBACK_MEASURES = ['feedback_count', 'vote_count', 'comment_count'] as const;
const ADMIN_MEASURES = ['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr', 'voter_mrr'] as const;
type Measure = (typeof EVENT_MEASURES)[number] | (typeof FEEDBACK_MEASURES)[number] | (typeof ADMIN_MEASURES)[number];
const KEY_SURFACE: readonly Measure[] = [...EVENT_MEASURES, ...FEEDBACK_MEASURES];
const ADMIN_SURFACE: readonly Measure[] = [...KEY_SURFACE, ...ADMIN_MEASURES];
const MONEY = new Set<string>(['total_mrr', 'voter_mrr']);

const ALLOWANCE: Record<Plan, number> = { free: 30, pro: 30, team: 365 };
const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
type Interval = (typeof INTERVALS)[number];
const MAX_BUCKETS = 2000;

const BREAKDOWN_DIMENSIONS = ['event_name', 'property.plan', 'property.n', 'property.absent', 'category', 'status'] as const;
type Dimension = (typeof BREAKDOWN_DIMENSIONS)[number];

// ---------------------------------------------------------------------------------------------
// Generated data: times are "days back from today" plus a time of day, so windows line up with
// the data whatever the date of the run.

/** Days back from today: dense on a few days (today, the 30-day edge, the 365-day edge...), the rest over 400 days. */
const dayArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 3 }) },
  { weight: 2, arbitrary: fc.constantFrom(15, 29, 30, 31, 45, 200, 364, 365) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 399 }) },
);
const bigNat = (max: number) => fc.bigInt({ min: 0n, max: BigInt(max) }).map(Number);
/** Microseconds into a UTC day, often exactly on (or just before) a day or hour boundary. */
const timeOfDayArb = fc.oneof(
  fc.constant(0),
  fc.constant(DAY_US - 1),
  fc.integer({ min: 1, max: 23 }).map((h) => h * HOUR_US),
  fc.integer({ min: 1, max: 23 }).map((h) => h * HOUR_US - 1),
  bigNat(DAY_US - 1),
  bigNat(DAY_US - 1),
);
/** A delay after another fact (µs): often none (same instant), else up to hours, days or months. */
const afterArb = fc.oneof(fc.constant(0), bigNat(3 * DAY_US), bigNat(120 * DAY_US));

const userArb = fc.constantFrom(...USERS);
const propertiesArb = fc.option(
  fc.record(
    {
      plan: fc.constantFrom('pro', 'free', 'team', ''),
      n: fc.constantFrom<string | number | boolean>(1, 2, 10, true, false, 'ten'),
      note: fc.constantFrom('x', 'y'),
    },
    { requiredKeys: [] },
  ),
  { nil: null, freq: 4 },
);

const eventArb = fc.record({
  name: fc.constantFrom(...EVENT_NAMES),
  user: userArb,
  day: dayArb,
  time: timeOfDayArb,
  properties: propertiesArb,
  /** Random bits of the event id: they decide the feed order of events at the same instant. */
  idBits: fc.integer({ min: 0, max: 0x3fff }),
  idTail: fc.integer({ min: 0, max: 0xffffff }),
});
const mrrArb = fc.oneof(
  fc.constant(null),
  fc.constant(0),
  fc.integer({ min: 1, max: 500 }),
  fc.integer({ min: 1, max: 99_999 }).map((cents) => cents / 100),
);
const registrationArb = fc.record({ user: userArb, day: dayArb, time: timeOfDayArb, mrr: mrrArb });
const feedbackArb = fc.record({
  category: fc.constantFrom(...CATEGORIES),
  creator: userArb,
  day: dayArb,
  time: timeOfDayArb,
  statusChanges: fc.array(fc.record({ after: afterArb, status: fc.constantFrom(...STATUSES) }), { maxLength: 3 }),
  mergedAfter: fc.option(afterArb, { nil: null, freq: 4 }),
});
const voteArb = fc.record({ item: fc.nat(), user: userArb, after: afterArb, removedAfter: fc.option(afterArb, { nil: null }) });
const commentArb = fc.record({ item: fc.nat(), user: userArb, after: afterArb });

const queryArb = fc.record({
  /** Days back of date_from / date_to; null leaves the parameter out. */
  from: fc.option(dayArb, { nil: null }),
  to: fc.option(fc.oneof({ weight: 5, arbitrary: dayArb }, { weight: 1, arbitrary: fc.constantFrom(-1, -3) }), { nil: null }),
  /** A short window for hourly series: date_to (days back) and how many days before it. */
  hourTo: dayArb,
  hourSpan: fc.integer({ min: 0, max: 2 }),
  measures: fc.option(fc.shuffledSubarray([...ADMIN_SURFACE], { minLength: 1 }), { nil: null }),
  event: fc.option(fc.constantFrom(...EVENT_NAMES), { nil: null, freq: 3 }),
  eventBreakdownMeasures: fc.option(fc.shuffledSubarray([...EVENT_MEASURES], { minLength: 1 }), { nil: null }),
  feedbackBreakdownMeasures: fc.option(fc.shuffledSubarray([...FEEDBACK_MEASURES], { minLength: 1 }), { nil: null }),
  limit: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
  feedLimit: fc.integer({ min: 1, max: 5 }),
  feedUser: fc.option(userArb, { nil: null, freq: 4 }),
  feedEvent: fc.option(fc.constantFrom(...EVENT_NAMES), { nil: null, freq: 4 }),
});

const scenarioArb = fc.record({
  plan: fc.constantFrom<Plan>('free', 'pro', 'team'),
  events: fc.array(eventArb, { maxLength: 120 }),
  registrations: fc.array(registrationArb, { maxLength: 20 }),
  feedback: fc.array(feedbackArb, { maxLength: 6 }),
  votes: fc.array(voteArb, { maxLength: 20 }),
  comments: fc.array(commentArb, { maxLength: 8 }),
  /** Inserts per table: several parts in ClickHouse (and in the rollups) for the same data. */
  inserts: fc.integer({ min: 1, max: 3 }),
  query: queryArb,
});
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

// ---------------------------------------------------------------------------------------------
// The model: events and facts as stored, and plain recomputations of every answer.

type ModelEvent = { id: string; name: string; user: string; properties: Record<string, unknown> | null; atMs: number };
type ModelFact = {
  id: number;
  kind: FactKind;
  /** Microseconds since the epoch (occurred_at is DateTime64(6)). */
  atUs: number;
  feedbackId: string | null;
  user: string;
  category: string;
  status: string;
  previousStatus: string;
  mergedIntoId: string | null;
  mrr: number | null;
};
type Model = { plan: Plan; events: ModelEvent[]; facts: ModelFact[] };

const hex = (value: number, width: number) => value.toString(16).padStart(width, '0');
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const usToIso = (us: number) => `${new Date(Math.floor(us / 1000)).toISOString().slice(0, 23)}${String(us % 1000).padStart(3, '0')}Z`;

/** Fact ids are outbox ids: unique, increasing in commit order. Kept unique across runs too. */
let nextFactId = 1_000_000;

function buildModel(s: Scenario, todayMs: number, nowMs: number): Model {
  const dayStartUs = (day: number) => (todayMs - day * DAY_MS) * 1000;
  const events = s.events.map((e, i): ModelEvent => {
    let atMs = Math.floor((dayStartUs(e.day) + e.time) / 1000);
    // Ingestion refuses times over an hour ahead; later today becomes the same time yesterday.
    if (atMs > nowMs) atMs -= DAY_MS;
    return {
      id: `${hex(i + 1, 8)}-0000-4000-${hex(0x8000 | e.idBits, 4)}-${hex(e.idTail, 12)}`,
      name: e.name,
      user: e.user,
      properties: e.properties,
      atMs,
    };
  });

  type Draft = Omit<ModelFact, 'id'>;
  const draft = (kind: FactKind, atUs: number, fields: Partial<Draft>): Draft => ({
    kind,
    atUs,
    feedbackId: null,
    user: '',
    category: '',
    status: '',
    previousStatus: '',
    mergedIntoId: null,
    mrr: null,
    ...fields,
  });
  const drafts: Draft[] = [];
  const items = s.feedback.map((f, i) => ({ id: `00000000-0000-4000-a000-${hex(i + 1, 12)}`, createdUs: dayStartUs(f.day) + f.time }));
  s.feedback.forEach((f, i) => {
    const item = items[i]!;
    drafts.push(
      draft('feedback_created', item.createdUs, { feedbackId: item.id, user: f.creator, category: f.category, status: 'pending' }),
    );
    // The creator's vote, recorded with the item (as the feedback repository does).
    drafts.push(draft('vote_added', item.createdUs, { feedbackId: item.id, user: f.creator }));
    let status = 'pending';
    for (const change of [...f.statusChanges].sort((a, b) => a.after - b.after)) {
      drafts.push(
        draft('feedback_status_changed', item.createdUs + change.after, {
          feedbackId: item.id,
          status: change.status,
          previousStatus: status,
        }),
      );
      status = change.status;
    }
    if (f.mergedAfter !== null && items.length > 1) {
      const target = items[(i + 1) % items.length]!;
      drafts.push(draft('feedback_merged', item.createdUs + f.mergedAfter, { feedbackId: item.id, mergedIntoId: target.id }));
    }
  });
  if (items.length > 0) {
    for (const v of s.votes) {
      const item = items[v.item % items.length]!;
      const addedUs = item.createdUs + v.after;
      drafts.push(draft('vote_added', addedUs, { feedbackId: item.id, user: v.user }));
      if (v.removedAfter !== null) drafts.push(draft('vote_removed', addedUs + v.removedAfter, { feedbackId: item.id, user: v.user }));
    }
    for (const c of s.comments) {
      const item = items[c.item % items.length]!;
      drafts.push(draft('comment_added', item.createdUs + c.after, { feedbackId: item.id, user: c.user }));
    }
  }
  for (const r of s.registrations) {
    drafts.push(draft('sdk_user_registered', dayStartUs(r.day) + r.time, { user: r.user, mrr: r.mrr }));
  }
  // Commit order: by time, and in the order above at the same instant (a stable sort).
  const facts = drafts
    .map((d, order) => ({ d, order }))
    .sort((a, b) => a.d.atUs - b.d.atUs || a.order - b.order)
    .map(({ d }): ModelFact => ({ ...d, id: nextFactId++ }));
  return { plan: s.plan, events, facts };
}

const byTimeThenId = (a: ModelFact, b: ModelFact) => a.atUs - b.atUs || a.id - b.id;

type Win = {
  startMs: number;
  endMs: number;
  echo: {
    event_scope: 'all' | 'predefined_only';
    retention_clamped: boolean;
    retention_window_days: number;
    date_from: string;
    date_to: string;
  };
};

/** The applied window of a request (SPEC 8.3): default the 30 days ending today, clamped keeping date_to. */
function windowOf(params: { date_from?: string | undefined; date_to?: string | undefined }, plan: Plan, todayMs: number): Win {
  const toMs = params.date_to !== undefined ? Date.parse(`${params.date_to}T00:00:00Z`) : todayMs;
  let fromMs = params.date_from !== undefined ? Date.parse(`${params.date_from}T00:00:00Z`) : toMs - 29 * DAY_MS;
  const days = Math.round((toMs - fromMs) / DAY_MS) + 1;
  const clamped = days > ALLOWANCE[plan];
  if (clamped) fromMs = toMs - (ALLOWANCE[plan] - 1) * DAY_MS;
  return {
    startMs: fromMs,
    endMs: toMs + DAY_MS,
    echo: {
      event_scope: plan === 'free' ? 'predefined_only' : 'all',
      retention_clamped: clamped,
      retention_window_days: ALLOWANCE[plan],
      date_from: isoDay(fromMs),
      date_to: isoDay(toMs),
    },
  };
}

function naturalStart(ms: number, interval: Interval): number {
  const d = new Date(ms);
  switch (interval) {
    case 'hour':
      return ms - (ms % HOUR_MS);
    case 'day':
      return ms - (ms % DAY_MS);
    case 'week': {
      const day = ms - (ms % DAY_MS);
      return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
    }
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
}

function nextStart(ms: number, interval: Interval): number {
  const d = new Date(ms);
  switch (interval) {
    case 'hour':
      return ms + HOUR_MS;
    case 'day':
      return ms + DAY_MS;
    case 'week':
      return ms + 7 * DAY_MS;
    case 'month':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
}

/** Every bucket overlapping the window, with the part of the window it covers. */
function bucketsOf(win: Win, interval: Interval): { start: number; from: number; to: number }[] {
  const buckets: { start: number; from: number; to: number }[] = [];
  for (let start = naturalStart(win.startMs, interval); start < win.endMs; start = nextStart(start, interval)) {
    buckets.push({ start, from: Math.max(start, win.startMs), to: Math.min(nextStart(start, interval), win.endMs) });
  }
  return buckets;
}

/** Event names the event measures count: the `event` filter, else every name, but only the predefined ones on Free. */
function countedNames(plan: Plan, event: string | null): Set<string> | null {
  if (event !== null) return new Set([event]);
  return plan === 'free' ? new Set(PREDEFINED) : null;
}

/** All eleven measures over [fromMs, toMs), recomputed from the generated data. */
function measuresOver(model: Model, names: Set<string> | null, fromMs: number, toMs: number): Record<Measure, number> {
  const fromUs = fromMs * 1000;
  const toUs = toMs * 1000;
  const events = model.events.filter((e) => e.atMs >= fromMs && e.atMs < toMs && (names === null || names.has(e.name)));
  const inRange = model.facts.filter((f) => f.atUs >= fromUs && f.atUs < toUs);
  const count = (kind: FactKind) => inRange.filter((f) => f.kind === kind).length;

  const registrations = model.facts.filter((f) => f.kind === 'sdk_user_registered').sort(byTimeThenId);
  const users = [...new Set(registrations.map((r) => r.user))];
  /** A user's latest MRR before `toUs` (null counts as 0), or undefined when not registered by then. */
  const latestMrr = (user: string): number | undefined => {
    const before = registrations.filter((r) => r.user === user && r.atUs < toUs);
    return before.length === 0 ? undefined : (before.at(-1)!.mrr ?? 0);
  };
  const firstSeen = new Map(users.map((u) => [u, registrations.find((r) => r.user === u)!.atUs]));
  const voters = new Set(inRange.filter((f) => f.kind === 'vote_added').map((f) => f.user));
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  return {
    event_count: events.length,
    unique_event_users: new Set(events.map((e) => e.user)).size,
    feedback_count: count('feedback_created'),
    vote_count: count('vote_added') - count('vote_removed'),
    comment_count: count('comment_added'),
    sdk_users: users.filter((u) => firstSeen.get(u)! < toUs).length,
    new_sdk_users: users.filter((u) => firstSeen.get(u)! >= fromUs && firstSeen.get(u)! < toUs).length,
    active_sdk_users: new Set(inRange.filter((f) => f.kind === 'sdk_user_registered').map((f) => f.user)).size,
    paying_users: users.filter((u) => (latestMrr(u) ?? 0) > 0).length,
    total_mrr: sum(users.map((u) => latestMrr(u) ?? 0)),
    voter_mrr: sum([...voters].map((u) => latestMrr(u) ?? 0)),
  };
}

const pick = (all: Record<Measure, number>, measures: readonly Measure[]) =>
  Object.fromEntries(measures.map((m) => [m, all[m]])) as Partial<Record<Measure, number>>;

type Row = { key: string | null; measures: Partial<Record<Measure, number>> };

/** Rows by the first measure descending, ties by key with the null row last; then the limit. */
function orderRows(rows: Row[], first: Measure, limit: number): Row[] {
  return [...rows]
    .sort(
      (a, b) =>
        (b.measures[first] ?? 0) - (a.measures[first] ?? 0) ||
        (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) ||
        (a.key! < b.key! ? -1 : a.key! > b.key! ? 1 : 0),
    )
    .slice(0, limit);
}

/** The breakdown value of an event: string values as they are, others as JSON text, a missing key null. */
function propertyValue(event: ModelEvent, key: string): string | null {
  if (event.properties === null || !Object.hasOwn(event.properties, key)) return null;
  const value = event.properties[key];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function eventBreakdown(
  model: Model,
  names: Set<string> | null,
  win: Win,
  keyOf: (e: ModelEvent) => string | null,
  measures: readonly Measure[],
): Row[] {
  const groups = new Map<string | null, ModelEvent[]>();
  for (const e of model.events) {
    if (e.atMs < win.startMs || e.atMs >= win.endMs || (names !== null && !names.has(e.name))) continue;
    const key = keyOf(e);
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return [...groups].map(([key, events]) => ({
    key,
    measures: pick(
      { event_count: events.length, unique_event_users: new Set(events.map((e) => e.user)).size } as Record<Measure, number>,
      measures,
    ),
  }));
}

function feedbackBreakdown(model: Model, win: Win, dimension: 'category' | 'status', measures: readonly Measure[]): Row[] {
  const endUs = win.endMs * 1000;
  const keyOf = (feedbackId: string): string => {
    const own = model.facts.filter((f) => f.feedbackId === feedbackId).sort(byTimeThenId);
    if (dimension === 'category') return own.find((f) => f.kind === 'feedback_created')!.category;
    // The status as of the window's end: the latest status set before then (items start pending).
    const set = own.filter((f) => (f.kind === 'feedback_created' || f.kind === 'feedback_status_changed') && f.atUs < endUs);
    return set.at(-1)!.status;
  };
  const groups = new Map<string, ModelFact[]>();
  for (const f of model.facts) {
    if (f.atUs < win.startMs * 1000 || f.atUs >= endUs) continue;
    if (!['feedback_created', 'vote_added', 'vote_removed', 'comment_added'].includes(f.kind)) continue;
    const key = keyOf(f.feedbackId!);
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  return [...groups].map(([key, facts]) => {
    const count = (kind: FactKind) => facts.filter((f) => f.kind === kind).length;
    return {
      key,
      measures: pick(
        {
          feedback_count: count('feedback_created'),
          vote_count: count('vote_added') - count('vote_removed'),
          comment_count: count('comment_added'),
        } as Record<Measure, number>,
        measures,
      ),
    };
  });
}

/** ClickHouse orders UUIDs by their second 8 bytes, then their first (not as text). */
function compareUuidAsClickHouse(a: string, b: string): number {
  const ha = a.replaceAll('-', '');
  const hb = b.replaceAll('-', '');
  const key = (h: string) => h.slice(16) + h.slice(0, 16);
  return key(ha) < key(hb) ? -1 : key(ha) > key(hb) ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Loading a scenario, and the HTTP side

type Surface = { name: 'key' | 'admin'; base: string; auth: { apiKey?: string; bearer?: string }; measures: readonly Measure[] };

type Run = {
  s: Scenario;
  model: Model;
  project: TestProject;
  todayMs: number;
  surfaces: Surface[];
  /** date_from / date_to as requested (undefined: left out). */
  dates: { date_from?: string; date_to?: string };
  win: Win;
  /** Free plan with an `event` filter naming a custom event: every measure request is a 402. */
  refusedFilter: boolean;
};

function chunked<T>(list: T[], parts: number): T[][] {
  const chunks: T[][] = Array.from({ length: parts }, () => []);
  for (const [i, item] of list.entries()) chunks[i % parts]!.push(item);
  return chunks.filter((c) => c.length > 0);
}

async function load(s: Scenario, ingestion: 'direct' | 'http'): Promise<Run> {
  const nowMs = Date.now();
  const todayMs = nowMs - (nowMs % DAY_MS);
  const project = await createProject(server, { plan: s.plan });
  const model = buildModel(s, todayMs, nowMs);

  for (const chunk of chunked(model.events, s.inserts)) {
    if (ingestion === 'direct') {
      const rows: IngestEvent[] = chunk.map((e) => ({
        project_id: project.id,
        event_id: e.id,
        event_name: e.name,
        user_id: e.user,
        properties: e.properties,
        created_at: new Date(e.atMs).toISOString(),
        received_at: new Date(nowMs).toISOString(),
        id_from_client: true,
      }));
      await insertEvents(server.clickhouse, rows, `property-events:${randomUUID()}`);
    } else {
      const response = await server.request('POST', '/api/v1/events/batch', {
        apiKey: project.apiKey,
        body: {
          events: chunk.map((e) => ({
            eventId: e.id,
            eventName: e.name,
            userId: e.user,
            ...(e.properties === null ? {} : { properties: e.properties }),
            timestamp: new Date(e.atMs).toISOString(),
          })),
        },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.accepted).toBe(chunk.length);
    }
  }
  if (ingestion === 'http') {
    // An answer of 200 means the events are in the durable ingest log (embedded mode); its shipper
    // makes them visible in ClickHouse shortly after (docs/ingestion.md).
    await eventually('the batch events in ClickHouse', 30_000, async () => {
      const [row] = await server.clickhouseRows<{ n: string }>('SELECT count() AS n FROM events WHERE project_id = {project:UUID}', {
        project: project.id,
      });
      return Number(row?.n) === model.events.length;
    });
  }
  const firstSeen = new Map<string, number>();
  for (const f of [...model.facts].sort(byTimeThenId)) {
    if (f.kind === 'sdk_user_registered' && !firstSeen.has(f.user)) firstSeen.set(f.user, f.atUs);
  }
  for (const chunk of chunked(model.facts, s.inserts)) {
    const rows: FactRow[] = chunk.map((f) => ({
      fact_id: String(f.id),
      project_id: project.id,
      kind: f.kind,
      occurred_at: usToIso(f.atUs),
      feedback_id: f.feedbackId,
      user_id: f.user,
      category: f.category,
      status: f.status,
      previous_status: f.previousStatus,
      merged_into_id: f.mergedIntoId,
      comment_id: f.kind === 'comment_added' ? randomUUID() : null,
      is_admin: false,
      mrr: f.mrr,
      first_seen_at: f.kind === 'sdk_user_registered' ? usToIso(firstSeen.get(f.user)!) : null,
    }));
    await insertFacts(server.clickhouse, rows, `property-facts:${randomUUID()}`);
  }

  // Requested dates: offsets are days back from today; a date_from after date_to is swapped.
  let { from, to } = s.query;
  if (from !== null && to !== null && from < to) [from, to] = [to, from];
  const dates: { date_from?: string; date_to?: string } = {};
  if (from !== null) dates.date_from = isoDay(todayMs - from * DAY_MS);
  if (to !== null) dates.date_to = isoDay(todayMs - to * DAY_MS);
  return {
    s,
    model,
    project,
    todayMs,
    surfaces: [
      { name: 'key', base: '/api/v1/metrics', auth: { apiKey: project.apiKey }, measures: KEY_SURFACE },
      {
        name: 'admin',
        base: `/api/v1/projects/${project.id}/metrics`,
        auth: { bearer: project.account.adminToken },
        measures: ADMIN_SURFACE,
      },
    ],
    dates,
    win: windowOf(dates, s.plan, todayMs),
    refusedFilter: s.plan === 'free' && s.query.event !== null && !(PREDEFINED as readonly string[]).includes(s.query.event),
  };
}

function queryString(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) search.set(name, String(value));
  }
  return search.toString();
}

async function get(surface: Surface, operation: string, params: Record<string, string | number | null | undefined>) {
  const path = `${surface.base}/${operation}?${queryString(params)}`;
  return { path, response: await server.request('GET', path, surface.auth) };
}

/** Money measures of `actual` that are within toBeCloseTo(expected, 6) take the expected value, so one toEqual shows every real difference. */
function reconcileMoney(actual: unknown, expected: unknown, key?: string): unknown {
  if (typeof actual === 'number' && typeof expected === 'number' && key !== undefined && MONEY.has(key)) {
    return Math.abs(actual - expected) < 5e-7 ? expected : actual;
  }
  if (Array.isArray(actual) && Array.isArray(expected)) return actual.map((a, i) => reconcileMoney(a, expected[i]));
  if (actual !== null && expected !== null && typeof actual === 'object' && typeof expected === 'object' && !Array.isArray(expected)) {
    return Object.fromEntries(Object.entries(actual).map(([k, v]) => [k, reconcileMoney(v, (expected as Record<string, unknown>)[k], k)]));
  }
  return actual;
}

function expectBody(label: string, response: HttpResponse, expected: unknown) {
  expect(response.status, `${label} → ${JSON.stringify(response.body).slice(0, 300)}`).toBe(200);
  expect(reconcileMoney(response.body, expected), label).toEqual(expected);
}

function expectRequiresPro(label: string, response: HttpResponse) {
  expect(response.status, label).toBe(402);
  expect(response.body, label).toEqual({ error: { code: 'METRICS_CUSTOM_EVENTS_REQUIRE_PRO', message: expect.any(String) } });
}

/** The `measures` parameter for a surface (admin-only ones dropped on the key surface) and the measures to expect. */
function measuresFor(surface: Surface, requested: readonly Measure[] | null): { param: string | undefined; expected: readonly Measure[] } {
  const usable = requested?.filter((m) => surface.measures.includes(m)) ?? [];
  return usable.length === 0 ? { param: undefined, expected: surface.measures } : { param: usable.join(','), expected: usable };
}

// ---------------------------------------------------------------------------------------------
// The checks, one per operation

async function checkSummary(run: Run, surface: Surface) {
  const { param, expected } = measuresFor(surface, run.s.query.measures);
  const { path, response } = await get(surface, 'summary', { ...run.dates, measures: param, event: run.s.query.event });
  if (run.refusedFilter) return expectRequiresPro(path, response);
  const names = countedNames(run.s.plan, run.s.query.event);
  expectBody(path, response, {
    ...run.win.echo,
    measures: pick(measuresOver(run.model, names, run.win.startMs, run.win.endMs), expected),
  });
}

async function checkTimeseries(run: Run, surface: Surface, interval: Interval, dates: { date_from?: string; date_to?: string }) {
  const { param, expected } = measuresFor(surface, run.s.query.measures);
  const { path, response } = await get(surface, 'timeseries', { ...dates, interval, measures: param, event: run.s.query.event });
  if (run.refusedFilter) return expectRequiresPro(path, response);
  const win = windowOf(dates, run.s.plan, run.todayMs);
  const buckets = bucketsOf(win, interval);
  if (buckets.length > MAX_BUCKETS) {
    expect(response.status, path).toBe(400);
    expect(response.body, path).toEqual({ error: { code: 'METRICS_TOO_MANY_BUCKETS', message: expect.any(String) } });
    return;
  }
  const names = countedNames(run.s.plan, run.s.query.event);
  expectBody(path, response, {
    ...win.echo,
    interval,
    buckets: buckets.map((b) => ({
      start: apiTime(new Date(b.start)),
      measures: pick(measuresOver(run.model, names, b.from, b.to), expected),
    })),
  });
}

async function checkBreakdown(run: Run, surface: Surface, dimension: Dimension) {
  const q = run.s.query;
  const eventKind = dimension === 'event_name' || dimension.startsWith('property.');
  const requested = eventKind ? q.eventBreakdownMeasures : q.feedbackBreakdownMeasures;
  const measures: readonly Measure[] = requested ?? (eventKind ? EVENT_MEASURES : FEEDBACK_MEASURES);
  const { path, response } = await get(surface, 'breakdown', {
    ...run.dates,
    dimension,
    measures: requested?.join(','),
    event: q.event,
    limit: q.limit,
  });
  if ((dimension === 'event_name' && run.s.plan === 'free') || run.refusedFilter) return expectRequiresPro(path, response);
  const names = countedNames(run.s.plan, q.event);
  const rows =
    dimension === 'event_name'
      ? eventBreakdown(run.model, names, run.win, (e) => e.name, measures)
      : dimension.startsWith('property.')
        ? eventBreakdown(run.model, names, run.win, (e) => propertyValue(e, dimension.slice('property.'.length)), measures)
        : feedbackBreakdown(run.model, run.win, dimension as 'category' | 'status', measures);
  expectBody(path, response, { ...run.win.echo, dimension, rows: orderRows(rows, measures[0]!, q.limit ?? 10) });
}

async function checkFeed(run: Run, surface: Surface) {
  const q = run.s.query;
  const filters = { event: q.feedEvent, user_id: q.feedUser };
  if (run.s.plan === 'free') {
    const { path, response } = await get(surface, 'events', { ...run.dates, ...filters });
    return expectRequiresPro(path, response);
  }
  const expected = run.model.events
    .filter((e) => e.atMs >= run.win.startMs && e.atMs < run.win.endMs)
    .filter((e) => (q.feedEvent === null || e.name === q.feedEvent) && (q.feedUser === null || e.user === q.feedUser))
    .sort((a, b) => b.atMs - a.atMs || compareUuidAsClickHouse(b.id, a.id))
    .map((e) => ({ id: e.id, event_name: e.name, user_id: e.user, properties: e.properties, created_at: apiTime(new Date(e.atMs)) }));
  // A small page size, but at most about ten pages per surface.
  const limit = Math.max(q.feedLimit, Math.ceil(expected.length / 8));
  const seen: unknown[] = [];
  let cursor: string | null = null;
  for (let page = 0; ; page++) {
    expect(page, 'the feed ends').toBeLessThan(expected.length + 2);
    const { path, response } = await get(surface, 'events', { ...run.dates, ...filters, limit, cursor });
    expect(response.status, `${path} → ${JSON.stringify(response.body).slice(0, 300)}`).toBe(200);
    const { events, next_cursor, ...echo } = response.body as { events: unknown[]; next_cursor: string | null };
    expect(echo, path).toEqual(run.win.echo);
    expect(events.length, path).toBeLessThanOrEqual(limit);
    if (events.length < limit) expect(next_cursor, `${path}: a short page is the last`).toBeNull();
    seen.push(...events);
    if (next_cursor === null) break;
    cursor = next_cursor;
  }
  expect(seen, `feed of ${surface.name} (limit ${limit})`).toEqual(expected);
}

const hourDates = (run: Run) => ({
  date_from: isoDay(run.todayMs - (run.s.query.hourTo + run.s.query.hourSpan) * DAY_MS),
  date_to: isoDay(run.todayMs - run.s.query.hourTo * DAY_MS),
});

async function checkSummaryAndSeries(run: Run) {
  for (const surface of run.surfaces) {
    await checkSummary(run, surface);
    for (const interval of INTERVALS) await checkTimeseries(run, surface, interval, run.dates);
    await checkTimeseries(run, surface, 'hour', hourDates(run));
  }
}

async function checkBreakdowns(run: Run) {
  for (const surface of run.surfaces) {
    for (const dimension of BREAKDOWN_DIMENSIONS) await checkBreakdown(run, surface, dimension);
  }
}

async function checkFeeds(run: Run) {
  for (const surface of run.surfaces) await checkFeed(run, surface);
}

// ---------------------------------------------------------------------------------------------

const example = (s: Partial<Omit<Scenario, 'query'>> & { query?: Partial<Scenario['query']> }): [Scenario] => [
  {
    plan: 'team',
    events: [],
    registrations: [],
    feedback: [],
    votes: [],
    comments: [],
    inserts: 1,
    ...s,
    query: {
      from: null,
      to: null,
      hourTo: 1,
      hourSpan: 1,
      measures: null,
      event: null,
      eventBreakdownMeasures: null,
      feedbackBreakdownMeasures: null,
      limit: null,
      feedLimit: 3,
      feedUser: null,
      feedEvent: null,
      ...s.query,
    },
  },
];

/**
 * Shrunk counterexamples of past failures, run before the random scenarios of every property
 * (they stay valid whatever the date of the run).
 */
const EXAMPLES: [Scenario][] = [
  // A string property value "" is a value, not a missing key: its breakdown row has key "", not null.
  example({
    plan: 'free',
    events: [{ name: 'feedback_list', user: 'u0', day: 0, time: 0, properties: { plan: '' }, idBits: 0, idTail: 0 }],
  }),
  // Week and month buckets that begin before date_from: the point-in-time measures must count the
  // registrations of that first bucket once. Two windows, so one of them starts mid-week or mid-month.
  example({ registrations: [{ user: 'u0', day: 40, time: 0, mrr: 1 }], query: { from: 40, to: 0 } }),
  example({ registrations: [{ user: 'u0', day: 41, time: 0, mrr: 1 }], query: { from: 41, to: 0 } }),
  // Two registrations of one user at the same instant: the latest is the one with the higher fact
  // id, for voter_mrr as for total_mrr (the creator's vote makes u1 a voter).
  example({
    registrations: [
      { user: 'u1', day: 1, time: 0, mrr: 10 },
      { user: 'u1', day: 1, time: 0, mrr: 20 },
    ],
    feedback: [{ category: 'other', creator: 'u1', day: 1, time: 5 * HOUR_US, statusChanges: [], mergedAfter: null }],
    query: { from: 1, to: 0 },
  }),
];

/** Bounded shrinking: a failure still reports its (partly) shrunk counterexample and replay seed. */
const runOptions = (numRuns: number) => ({
  numRuns: cases(numRuns),
  examples: EXAMPLES,
  plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(30_000))],
});

describe('metrics equal a plain recomputation from the generated data (property-based)', () => {
  it('summary and timeseries (hour, day, week, month) on both surfaces', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => checkSummaryAndSeries(await load(s, 'direct'))),
      runOptions(20),
    );
  });

  it('breakdowns by event_name, property.<key>, category and status on both surfaces', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => checkBreakdowns(await load(s, 'direct'))),
      runOptions(20),
    );
  });

  it('events feed: every event of the window, newest first, across cursor pages, with filters', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => checkFeeds(await load(s, 'direct'))),
      runOptions(15),
    );
  });

  it('every operation after ingestion through POST /events/batch (rollups fed on the real path)', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const run = await load(s, 'http');
        await checkSummaryAndSeries(run);
        await checkBreakdowns(run);
        await checkFeeds(run);
      }),
      runOptions(6),
    );
  });
});
