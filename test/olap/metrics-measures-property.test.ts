/**
 * Property-based proof of the new metrics measures and compare (issue 38, section 2 and 4;
 * docs/metrics.md "Measures" and "Compare"): random logs of a Pro project (a 30-day allowance) over
 * 90 days, with `amount` a number, a numeric string, a word or missing, asked with and without a
 * filter. Every answer of the planner equals a reference computed here from the same rows:
 * - sum, avg, min, max over the numeric values in scope (numeric strings included), the quantiles
 *   exact and interpolated between ranks (h = (n − 1)·q), null without a numeric value;
 * - dau, wau, mau: distinct users with an event in scope in the 1, 7, 30 days ending with each
 *   bucket's last day within the window (date_to for the summary), never before date_to − 29;
 * - events_per_user = events / users, null without users;
 * - compare: previous_period is the same number of days right before date_from, previous_year the
 *   same dates a year earlier (29 February → 28 February); the earlier window starts no earlier
 *   than date_to − 29 (retention_clamped), and reads nothing when it ends before that.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import type { FilterList } from '../../src/olap/filter-types.js';
import { summary, timeseries } from '../../src/olap/metrics/metrics.planner.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { useEmbeddedClickHouse } from '../helpers/embedded-clickhouse.js';
import { cases, caseTimeLimit } from '../helpers/generated-cases.js';

const chdb = useEmbeddedClickHouse('measures-property');

const DAY = 86_400_000;
const FIRST = Date.parse('2026-01-01T00:00:00Z');
const SPAN_DAYS = 90;
const ALLOWANCE = 30;
const iso = (day: number) => new Date(FIRST + day * DAY).toISOString().slice(0, 10);

type Row = { user: string; day: number; ms: number; plan: string; amount: number | string | undefined };

const rowArb = fc.record({
  user: fc.constantFrom('u1', 'u2', 'u3', 'u4', 'u5'),
  day: fc.integer({ min: 0, max: SPAN_DAYS - 1 }),
  ms: fc.integer({ min: 0, max: DAY - 1 }),
  plan: fc.constantFrom('pro', 'free'),
  amount: fc.option(fc.oneof(fc.constantFrom(0, 1, 2.5, 7, 10, 99.5, -4), fc.constantFrom('3', '12.5', 'x', '')), {
    nil: undefined,
    freq: 4,
  }),
});

const FILTERS: FilterList[] = [[], [{ property: 'properties.plan', op: 'eq', value: 'pro' }]];
const MATH = ['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'] as const;
const LEVEL: Record<string, number> = { median: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };
const MEASURES = ['event_count', 'unique_event_users', 'events_per_user', 'dau', 'wau', 'mau', ...MATH.map((m) => `${m}:amount`)];

const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?$/;
const numberOf = (v: Row['amount']) => (typeof v === 'number' ? v : typeof v === 'string' && NUMBER_TEXT.test(v) ? Number(v) : undefined);

function mathOf(math: string, values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  switch (math) {
    case 'sum':
      return values.reduce((a, b) => a + b, 0);
    case 'avg':
      return values.reduce((a, b) => a + b, 0) / values.length;
    case 'min':
      return sorted[0] as number;
    case 'max':
      return sorted.at(-1) as number;
    default: {
      const h = (sorted.length - 1) * (LEVEL[math] as number);
      const lo = Math.floor(h);
      const a = sorted[lo] as number;
      const b = sorted[Math.min(lo + 1, sorted.length - 1)] as number;
      return a + (h - lo) * (b - a);
    }
  }
}

/** The measures over the days [from, to] whose active users end with `last`, reading nothing before `floor`. */
function reference(rows: Row[], filters: FilterList, from: number, to: number, last: number, floor: number) {
  const scoped = rows.filter((r) => filters.length === 0 || r.plan === 'pro');
  const inWindow = scoped.filter((r) => r.day >= from && r.day <= to);
  const users = new Set(inWindow.map((r) => r.user)).size;
  const active = (n: number) =>
    new Set(scoped.filter((r) => r.day <= last && r.day > last - n && r.day >= floor && r.day <= to).map((r) => r.user)).size;
  const numbers = inWindow.map((r) => numberOf(r.amount)).filter((v): v is number => v !== undefined);
  const values: Record<string, number | null> = {
    event_count: inWindow.length,
    unique_event_users: users,
    events_per_user: users === 0 ? null : inWindow.length / users,
    dau: active(1),
    wau: active(7),
    mau: active(30),
  };
  for (const math of MATH) values[`${math}:amount`] = mathOf(math, numbers);
  return values;
}

function expectValues(actual: Record<string, unknown>, expected: Record<string, number | null>, context: string) {
  for (const [measure, value] of Object.entries(expected)) {
    const got = actual[measure];
    if (value === null) expect(got, `${context} ${measure}`).toBeNull();
    else expect(got as number, `${context} ${measure}`).toBeCloseTo(value, 6);
  }
}

/** The same day a year earlier, 29 February as 28 February, as a day number (may be negative). */
function yearBefore(day: number): number {
  const d = new Date(FIRST + day * DAY);
  const last = new Date(Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth() + 1, 0)).getUTCDate();
  return Math.round((Date.UTC(d.getUTCFullYear() - 1, d.getUTCMonth(), Math.min(d.getUTCDate(), last)) - FIRST) / DAY);
}

describe('metrics measures over raw events', () => {
  it('summary and compare equal the reference', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 80, size: 'max' }),
        fc.integer({ min: 20, max: SPAN_DAYS - 1 }),
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(0, 1),
        fc.constantFrom('previous_period', 'previous_year') as fc.Arbitrary<'previous_period' | 'previous_year'>,
        async (rows, to, length, f, compare) => {
          const projectId = randomUUID();
          await insert(projectId, rows);
          const filters = FILTERS[f] as FilterList;
          const asked = Math.max(0, to - length + 1);
          const floor = to - ALLOWANCE + 1;
          const from = Math.max(asked, floor);
          const answer = (await summary(
            chdb.clickhouse,
            { projectId, plan: 'pro', surface: 'admin' },
            { date_from: iso(asked), date_to: iso(to), measures: MEASURES as never, filters, compare },
          )) as { date_from: string; retention_clamped: boolean; measures: Record<string, unknown>; compare: any };
          expect(answer.date_from).toBe(iso(from));
          expectValues(answer.measures, reference(rows, filters, from, to, to, floor), 'main');
          // The earlier window.
          const days = to - from + 1;
          let cFrom = compare === 'previous_period' ? from - days : yearBefore(from);
          const cTo = compare === 'previous_period' ? from - 1 : yearBefore(to);
          const clamped = cFrom < floor;
          const unreadable = cTo < floor;
          if (clamped && !unreadable) cFrom = floor;
          expect(answer.compare.date_from).toBe(iso(cFrom));
          expect(answer.compare.date_to).toBe(iso(cTo));
          expect(answer.compare.retention_clamped).toBe(clamped);
          const before = unreadable ? reference([], filters, cFrom, cTo, cTo, floor) : reference(rows, filters, cFrom, cTo, cTo, floor);
          expectValues(answer.compare.measures, before, 'compare');
          const now = reference(rows, filters, from, to, to, floor);
          for (const measure of MEASURES) {
            const a = now[measure];
            const b = before[measure];
            const change = a === null || a === undefined || b === null || b === undefined || b === 0 ? null : (a - b) / b;
            if (change === null) expect(answer.compare.change[measure], `change ${measure}`).toBeNull();
            else expect(answer.compare.change[measure], `change ${measure}`).toBeCloseTo(change, 6);
          }
        },
      ),
      { numRuns: cases(10), plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(30_000))] },
    );
  }, 300_000);

  it('timeseries by day and by week equal the reference, active users ending with each bucket’s last day', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArb, { minLength: 1, maxLength: 80, size: 'max' }),
        fc.integer({ min: 20, max: SPAN_DAYS - 1 }),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom(0, 1),
        fc.constantFrom('day', 'week') as fc.Arbitrary<'day' | 'week'>,
        async (rows, to, length, f, interval) => {
          const projectId = randomUUID();
          await insert(projectId, rows);
          const filters = FILTERS[f] as FilterList;
          const from = to - length + 1;
          const floor = to - ALLOWANCE + 1;
          const answer = (await timeseries(
            chdb.clickhouse,
            { projectId, plan: 'pro', surface: 'admin' },
            { date_from: iso(from), date_to: iso(to), measures: MEASURES as never, filters, interval },
          )) as { buckets: { start: string; measures: Record<string, unknown> }[] };
          // Buckets: each day, or each Monday-started week, clipped to the window.
          const starts: number[] = [];
          const mondayOf = (day: number) => day - ((new Date(FIRST + day * DAY).getUTCDay() + 6) % 7);
          for (let s = interval === 'day' ? from : mondayOf(from); s <= to; s += interval === 'day' ? 1 : 7) starts.push(s);
          expect(answer.buckets.map((b) => b.start)).toEqual(starts.map((s) => `${iso(s)}T00:00:00Z`));
          starts.forEach((s, i) => {
            const lo = Math.max(s, from);
            const hi = Math.min(s + (interval === 'day' ? 0 : 6), to);
            expectValues(
              (answer.buckets[i] as { measures: Record<string, unknown> }).measures,
              reference(rows, filters, lo, hi, hi, floor),
              `bucket ${iso(s)}`,
            );
          });
        },
      ),
      { numRuns: cases(10), plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(30_000))] },
    );
  }, 300_000);
});

async function insert(projectId: string, rows: Row[]) {
  const events: IngestEvent[] = rows.map((row) => {
    const at = new Date(FIRST + row.day * DAY + row.ms).toISOString();
    const properties: Record<string, unknown> = { plan: row.plan };
    if (row.amount !== undefined) properties.amount = row.amount;
    return {
      project_id: projectId,
      event_id: randomUUID(),
      event_name: 'open_app',
      user_id: row.user,
      properties,
      created_at: at,
      received_at: at,
      id_from_client: false,
    };
  });
  await insertEvents(chdb.clickhouse, events, randomUUID());
}
