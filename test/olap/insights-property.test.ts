/**
 * Exactness of the funnel, retention and paths queries (issues 24 and 30, "Proof"): random small
 * event sets, random requests, each answer compared with a plain-TypeScript computation
 * from the same events by the written definitions (helpers/insights-reference.ts): equal in every
 * case. Events are written straight into ClickHouse for a fresh project id per case.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FunnelBody } from '../../src/api/insights/insights.schema.js';
import { edgeOrder, funnelAnswer } from '../../src/api/insights/insights.service.js';
import type { IngestEvent } from '../../src/core/event.js';
import type { ClickHouseClient } from '../../src/olap/clickhouse.js';
import type { FilterList, FilterOp, PropertyFilter } from '../../src/olap/filter-types.js';
import { funnel } from '../../src/olap/insights/funnel.queries.js';
import { paths } from '../../src/olap/insights/paths.queries.js';
import { retention } from '../../src/olap/insights/retention.queries.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { cases, caseTimeLimit } from '../helpers/generated-cases.js';
import {
  type RefEvent,
  type RefScope,
  type RefStep,
  referenceFunnel,
  referencePaths,
  referenceRetention,
} from '../helpers/insights-reference.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ workers: false });

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** A fixed Monday, so week buckets are exercised on both sides of it. */
const BASE = Date.parse('2026-03-02T00:00:00Z');
const NAMES = ['a', 'b', 'c', 'feedback_list'] as const;
const USERS = ['u0', 'u1', 'u2'] as const;

/** Times on a coarse grid (many ties and exact window edges) or anywhere in 20 days. */
const timeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 12 }).map((i) => BASE + i * 6 * HOUR_MS) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 30 }).map((i) => BASE + i * 12 * HOUR_MS) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 30 }).map((i) => BASE + 9 * DAY_MS + i * 60_000) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 20 * DAY_MS - 1 }).map((ms) => BASE + ms) },
);
const propertiesArb = fc.option(
  fc.record(
    { plan: fc.constantFrom<string | number | boolean>('pro', 'free', 1, true, '1'), n: fc.constantFrom(1, 2) },
    { requiredKeys: [] },
  ),
  { nil: null, freq: 3 },
);
/**
 * Filters of the language (docs/metrics.md, "Filters") over what the events carry: the two
 * properties (a string, a number, a boolean or a numeric string), a key never sent, the name and
 * the user; every op but user.mrr's (the filter compiler's own property test covers it), and `any`
 * groups. Often none, so the unfiltered answers stay covered too.
 */
const FILTER_PROPERTIES = ['properties.plan', 'properties.n', 'properties.absent', 'event_name', 'user_id'] as const;
const equalValue = fc.constantFrom<string | number | boolean>('pro', 'free', '1', 'a', 'u1', 1, 2, true);
const filterLeafArb: fc.Arbitrary<PropertyFilter> = fc.constantFrom(...FILTER_PROPERTIES).chain((property) =>
  fc.oneof(
    fc.record({ property: fc.constant(property), op: fc.constantFrom<FilterOp>('eq', 'neq'), value: equalValue }),
    fc.record({
      property: fc.constant(property),
      op: fc.constantFrom<FilterOp>('in', 'not_in'),
      value: fc.array(equalValue, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({
      property: fc.constant(property),
      op: fc.constantFrom<FilterOp>('contains', 'not_contains', 'starts_with'),
      value: fc.constantFrom('p', 'r', '1', 'u', ''),
    }),
    fc.record({ property: fc.constant(property), op: fc.constant<FilterOp>('regex'), value: fc.constantFrom('^p', '1$', 'a|e') }),
    fc.record({
      property: fc.constant(property),
      op: fc.constantFrom<FilterOp>('gt', 'gte', 'lt', 'lte'),
      value: fc.constantFrom(0, 1, 1.5, 2),
    }),
    fc.record({ property: fc.constant(property), op: fc.constant<FilterOp>('between'), value: fc.constantFrom([1, 1], [0, 1.5], [2, 5]) }),
    fc.record({ property: fc.constant(property), op: fc.constantFrom<FilterOp>('is_set', 'is_not_set') }),
  ),
);
const filtersArb: fc.Arbitrary<FilterList> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<FilterList>([]) },
  {
    weight: 3,
    arbitrary: fc.array(
      fc.oneof(
        { weight: 4, arbitrary: filterLeafArb },
        { weight: 1, arbitrary: fc.record({ any: fc.array(filterLeafArb, { minLength: 1, maxLength: 3 }) }) },
      ),
      { minLength: 1, maxLength: 3 },
    ),
  },
);

const eventArb = fc.record({ name: fc.constantFrom(...NAMES), user: fc.constantFrom(...USERS), t: timeArb, properties: propertiesArb });
const eventsArb = fc.array(eventArb, { minLength: 1, maxLength: 40 });

const scopeArb: fc.Arbitrary<RefScope> = fc
  .record({
    from: fc.oneof(fc.constant(0), fc.integer({ min: -1, max: 10 })),
    days: fc.integer({ min: 1, max: 25 }),
    names: fc.constantFrom<readonly string[] | null>(null, ['feedback_list', 'a', 'b']),
  })
  .map(({ from, days, names }) => ({ start: BASE + from * DAY_MS, end: BASE + (from + days) * DAY_MS, names }));

/**
 * Retention keeps a window of at most 64 buckets in one machine word, and a longer one in UInt256
 * words: windows of days of both kinds (70 and 90 days take the wide words).
 */
const retentionScopeArb: fc.Arbitrary<RefScope> = fc.oneof(
  { weight: 3, arbitrary: scopeArb },
  {
    weight: 1,
    arbitrary: fc
      .record({ from: fc.integer({ min: -40, max: 5 }), days: fc.constantFrom(70, 90) })
      .map(({ from, days }) => ({ start: BASE + from * DAY_MS, end: BASE + (from + days) * DAY_MS, names: null })),
  },
);

const stepArb: fc.Arbitrary<RefStep> = fc.record(
  {
    eventName: fc.constantFrom(...NAMES),
    where: fc.record({ plan: fc.constantFrom<string | number | boolean>('pro', 1, true, '1') }, { requiredKeys: [] }),
    filters: fc.oneof({ weight: 3, arbitrary: fc.constant<FilterList>([]) }, { weight: 1, arbitrary: filtersArb }),
  },
  { requiredKeys: ['eventName'] },
);
const funnelArb = fc.record({
  steps: fc.array(stepArb, { minLength: 2, maxLength: 4 }),
  windowMs: fc.constantFrom(0, 60_000, 6 * HOUR_MS, 12 * HOUR_MS, DAY_MS, 7 * DAY_MS),
  breakdown: fc.constantFrom(undefined, 'plan', 'n'),
  filters: filtersArb,
});
const retentionArb = fc.record({
  cohortEvent: fc.constantFrom(undefined, 'a', 'b'),
  returnEvent: fc.constantFrom(undefined, 'a', 'c'),
  interval: fc.constantFrom('day' as const, 'week' as const),
  periods: fc.integer({ min: 1, max: 4 }),
  filters: filtersArb,
});

/**
 * Paths need many users, repeats and ties: up to 12 users, 5 names (two alike, 'a' and 'aa', and
 * one predefined), times on a coarse grid (ties in time between different names and repeats of
 * one name at one instant) or anywhere.
 */
const PATH_NAMES = ['a', 'aa', 'b', 'c', 'feedback_list'] as const;
const pathTimeArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 8 }).map((i) => BASE + i * 12 * HOUR_MS) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 20 * DAY_MS - 1 }).map((ms) => BASE + ms) },
);
const pathEventsArb = fc.array(
  fc.record({
    name: fc.constantFrom(...PATH_NAMES),
    user: fc.integer({ min: 0, max: 11 }).map((i) => `u${i}`),
    t: pathTimeArb,
    properties: propertiesArb,
  }),
  { minLength: 1, maxLength: 80 },
);
const pathsArb = fc.record({
  anchor: fc.constantFrom<'none' | 'start' | 'end'>('none', 'start', 'end'),
  anchorEvent: fc.constantFrom(...PATH_NAMES),
  depth: fc.integer({ min: 2, max: 6 }),
  excludeEvents: fc.subarray([...PATH_NAMES], { maxLength: 2 }),
  filters: filtersArb,
});

/** Writes the events for a fresh project; returns its id. */
async function load(events: RefEvent[]): Promise<string> {
  const projectId = randomUUID();
  const rows: IngestEvent[] = events.map((e) => ({
    project_id: projectId,
    event_id: randomUUID(),
    event_name: e.name,
    user_id: e.user,
    properties: e.properties,
    created_at: new Date(e.t).toISOString(),
    received_at: new Date(e.t).toISOString(),
    id_from_client: false,
  }));
  await insertEvents(server.clickhouse, rows, randomUUID());
  return projectId;
}

const byKey = <T>(rows: T[], key: (row: T) => string) => [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

const runOptions = { numRuns: cases(20), plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(20_000))] };

describe('insights queries, filtered or not, equal a plain recomputation from the same events (property-based)', () => {
  it('funnel: users per step and median time to convert, with and without a breakdown', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, scopeArb, funnelArb, async (events, scope, query) => {
        const projectId = await load(events);
        const actual = await funnel(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referenceFunnel(events, scope, query.steps, query.windowMs, query.breakdown, query.filters);
        const key = (row: { breakdown: string | null }) => JSON.stringify(row.breakdown);
        expect(byKey(actual, key)).toEqual(byKey(expected, key));
      }),
      runOptions,
    );
  });

  it('funnel compare: the earlier window (previous period or year, clamped at the allowance counted back from date_to) answers the funnel of its own events', {
    timeout: 120_000,
  }, async () => {
    // Events over 45 days around BASE, and a copy of some a year earlier (2025 is not a leap year).
    const YEAR_MS = 365 * DAY_MS;
    const compareEventsArb = fc
      .array(
        fc.record({
          name: fc.constantFrom(...NAMES),
          user: fc.constantFrom(...USERS),
          t: fc.oneof(
            fc.integer({ min: -25, max: 20 }).map((d) => BASE + d * DAY_MS + 8 * HOUR_MS),
            fc.integer({ min: -25 * DAY_MS, max: 20 * DAY_MS }).map((ms) => BASE + ms),
          ),
          properties: propertiesArb,
          lastYear: fc.boolean(),
        }),
        { minLength: 1, maxLength: 40 },
      )
      .map((list) => list.flatMap(({ lastYear, ...e }) => (lastYear ? [e, { ...e, t: e.t - YEAR_MS }] : [e])));
    const requestArb = fc.record({
      from: fc.integer({ min: -5, max: 10 }),
      days: fc.integer({ min: 1, max: 25 }),
      kind: fc.constantFrom('previous_period' as const, 'previous_year' as const),
      plan: fc.constantFrom('pro' as const, 'team' as const),
      steps: fc.array(fc.record({ eventName: fc.constantFrom(...NAMES) }), { minLength: 2, maxLength: 3 }),
      filters: filtersArb,
    });
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const yearBefore = (ms: number) => {
      const d = new Date(ms);
      const last = new Date(Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth() + 1, 0)).getUTCDate();
      return Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth(), Math.min(d.getUTCDate(), last));
    };
    await fc.assert(
      fc.asyncProperty(compareEventsArb, requestArb, async (events, r) => {
        const projectId = await load(events);
        const start = BASE + r.from * DAY_MS;
        const end = start + r.days * DAY_MS;
        const body = {
          steps: r.steps,
          dateFrom: day(start),
          dateTo: day(end - DAY_MS),
          conversionWindowSeconds: 86_400,
          filters: r.filters,
          compare: r.kind,
        } as FunnelBody;
        const answer = await funnelAnswer(server.clickhouse, { projectId, plan: r.plan }, body);
        // The definition: the same number of days right before date_from, or the same dates a year
        // earlier; nothing before date_to's allowance (30 days on Pro, 365 on Team) is read.
        const [from, last] =
          r.kind === 'previous_period' ? [start - r.days * DAY_MS, start - DAY_MS] : [yearBefore(start), yearBefore(end - DAY_MS)];
        const floor = end - (r.plan === 'pro' ? 30 : 365) * DAY_MS;
        const readFrom = Math.max(from, floor);
        const readTo = last + DAY_MS;
        const expected = referenceFunnel(
          events,
          { start: readFrom, end: Math.max(readFrom, readTo), names: null },
          r.steps,
          86_400_000,
          undefined,
          r.filters,
        )[0];
        expect(answer.compare).toMatchObject({
          date_from: day(readTo > floor ? readFrom : from),
          date_to: day(last),
          retention_clamped: from < floor,
        });
        expect(answer.compare?.steps.map((s) => s.users)).toEqual(r.steps.map((_, k) => expected?.users[k] ?? 0));
        // The main answer is the funnel of the main window, untouched by the compare.
        const main = referenceFunnel(events, { start, end, names: null }, r.steps, 86_400_000, undefined, r.filters)[0];
        expect(answer.steps.map((s) => s.users)).toEqual(r.steps.map((_, k) => main?.users[k] ?? 0));
      }),
      runOptions,
    );
  });

  it('retention: cohort sizes and returns per period, by day and by week', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, retentionScopeArb, retentionArb, async (events, scope, query) => {
        const projectId = await load(events);
        const actual = await retention(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referenceRetention(events, scope, query);
        const key = (row: { cohort_start: string; period: number }) => `${row.cohort_start}/${String(row.period).padStart(3, '0')}`;
        expect(byKey(actual, key)).toEqual(byKey(expected, key));
      }),
      runOptions,
    );
  });

  it('paths: users, every edge and the top paths, from a start event, to an end event or from the first event, at every depth', {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(pathEventsArb, scopeArb, pathsArb, async (events, scope, arb) => {
        const query = {
          depth: arb.depth,
          filters: arb.filters,
          excludeEvents: arb.excludeEvents.filter((name) => name !== arb.anchorEvent),
          ...(arb.anchor === 'start' ? { startEvent: arb.anchorEvent } : arb.anchor === 'end' ? { endEvent: arb.anchorEvent } : {}),
        };
        const projectId = await load(events);
        const actual = await paths(
          server.clickhouse,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
        );
        const expected = referencePaths(events, scope, query);
        expect({ ...actual, edges: [...actual.edges].sort(edgeOrder) }).toEqual({
          ...expected,
          edges: [...expected.edges].sort(edgeOrder),
        });
      }),
      runOptions,
    );
  });

  it('paths of short users add to the count of a path the first query ranked below the top ones', async () => {
    // Ten paths of two users each, then z → y with one answered user; two short users (z z z y:
    // four events, more than K = 2, whose first two collapse to one name) also walk z → y, which
    // makes it the top path with 3 users though the first query ranked it eleventh.
    const events: RefEvent[] = [];
    const at = (i: number) => BASE + DAY_MS + i * 60_000;
    for (let p = 0; p < 10; p++) {
      for (const u of [0, 1])
        events.push(
          { name: 'n', user: `p${p}-${u}`, t: at(0), properties: null },
          { name: `m${p}`, user: `p${p}-${u}`, t: at(1), properties: null },
        );
    }
    events.push({ name: 'z', user: 'answered', t: at(0), properties: null }, { name: 'y', user: 'answered', t: at(1), properties: null });
    for (const user of ['short-1', 'short-2']) {
      for (const [i, name] of ['z', 'z', 'z', 'y'].entries()) events.push({ name, user, t: at(i), properties: null });
    }
    const projectId = await load(events);
    const scope = { start: BASE, end: BASE + 3 * DAY_MS, names: null };
    const query = { depth: 2, excludeEvents: [] };
    const actual = await paths(
      server.clickhouse,
      { projectId, start: new Date(scope.start), end: new Date(scope.end), names: null },
      query,
      {
        boundedEvents: 2,
      },
    );
    expect(actual.paths[0]).toEqual({ events: ['z', 'y'], users: 3 });
    expect({ ...actual, edges: [...actual.edges].sort(edgeOrder) }).toEqual({
      ...referencePaths(events, scope, query),
      edges: [...referencePaths(events, scope, query).edges].sort(edgeOrder),
    });
  });

  it("paths from the first event keep each user's first K events, and ask again for the rows of exactly the users whose first K hold fewer than depth names", {
    timeout: 120_000,
  }, async () => {
    const boundedArb = fc.record({
      depth: fc.integer({ min: 2, max: 6 }),
      excludeEvents: fc.subarray([...PATH_NAMES], { maxLength: 2 }),
      boundedEvents: fc.integer({ min: 1, max: 8 }),
      maxShortUsers: fc.integer({ min: 0, max: 4 }),
    });
    await fc.assert(
      fc.asyncProperty(pathEventsArb, scopeArb, boundedArb, async (events, scope, arb) => {
        const query = { depth: arb.depth, excludeEvents: arb.excludeEvents };
        const projectId = await load(events);
        // Every query the function sends is kept, with its parameters.
        const sent: Record<string, unknown>[] = [];
        const counting = {
          query: (params: Parameters<ClickHouseClient['query']>[0]) => {
            sent.push(params.query_params ?? {});
            return server.clickhouse.query(params);
          },
        } as unknown as ClickHouseClient;
        const actual = await paths(
          counting,
          { projectId, start: new Date(scope.start), end: new Date(scope.end), names: scope.names },
          query,
          { boundedEvents: arb.boundedEvents, maxShortUsers: arb.maxShortUsers },
        );
        const expected = referencePaths(events, scope, query);
        expect({ ...actual, edges: [...actual.edges].sort(edgeOrder) }).toEqual({
          ...expected,
          edges: [...expected.edges].sort(edgeOrder),
        });
        // A short user, whom the first K events cannot answer: more than K events, and fewer than
        // depth names once the first K are collapsed.
        const byUser = new Map<string, RefEvent[]>();
        for (const e of events) {
          const inScope = e.t >= scope.start && e.t < scope.end && (scope.names === null || scope.names.includes(e.name));
          if (inScope && !query.excludeEvents.includes(e.name)) byUser.set(e.user, [...(byUser.get(e.user) ?? []), e]);
        }
        const short = [...byUser.entries()]
          .filter(([, own]) => {
            const first = [...own]
              .sort((x, y) => x.t - y.t || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
              .slice(0, arb.boundedEvents)
              .map((e) => e.name);
            return own.length > arb.boundedEvents && first.filter((name, i) => i === 0 || first[i - 1] !== name).length < arb.depth;
          })
          .map(([user]) => user)
          .sort();
        expect(sent.length).toBe(short.length === 0 ? 1 : 2);
        // Asked again: for the short users' rows (each named once), or, past maxShortUsers of them,
        // for every row. The answer being exact shows that exactly their paths were added.
        const again = sent[1]?.shortKeys as string[] | undefined;
        if (short.length > 0) expect(again?.length).toBe(short.length > arb.maxShortUsers ? undefined : short.length);
      }),
      runOptions,
    );
  });
});
