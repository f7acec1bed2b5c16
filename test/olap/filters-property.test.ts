/**
 * Property-based proof of the filter compiler (src/olap/filter-sql.ts; issue 38, section 1): random
 * event logs with strings, numbers, numeric strings, booleans, nulls, arrays, objects, nested keys
 * and missing keys, random filter lists with every op and `any` groups up to 2 deep, and SDK users
 * whose MRR changes. The events the compiled condition keeps, in 'json' mode over `events` (the JSON
 * column) and in 'raw' mode over `events_by_user` (properties_raw), both equal a reference computed
 * here from the same rows, from the definitions of docs/metrics.md "Filters":
 * - a value that is null, an object or an array is missing; the text of a value is the string,
 *   `true`/`false`, or the number's decimal text; a number is a JSON number or a string written as
 *   a JSON number;
 * - string ops compare the text; numeric ops compare numbers, and a non-number never matches;
 *   eq/in with a number or a boolean matches that JSON value; a missing value matches only
 *   is_not_set, neq, not_in and not_contains;
 * - user.mrr is the user's latest MRR by (occurred_at, fact_id), none when that is null or the
 *   user never registered.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import type { FactRow } from '../../src/core/fact.js';
import { filterCondition } from '../../src/olap/filter-sql.js';
import type { FilterList, FilterNode, FilterOp, PropertyFilter } from '../../src/olap/filter-types.js';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { insertFacts } from '../../src/olap/tables/facts.table.js';
import { useEmbeddedClickHouse } from '../helpers/embedded-clickhouse.js';
import { cases, caseTimeLimit } from '../helpers/generated-cases.js';

const chdb = useEmbeddedClickHouse('filters-property');

// ---------------------------------------------------------------------------------------------
// Generated data

const USERS = ['u1', 'u2', 'u3', '42'] as const;
const NAMES = ['a', 'b', 'checkout'] as const;
const STRINGS = ['pro', 'free', 'Pro', '', '12', '1.5', '007', '-3', '7', 'abc%_', '1e3', 'true', 'x y'] as const;
const NUMBERS = [0, 1, -3, 12, 12.5, 100, 7] as const;

const scalar = fc.oneof(fc.constantFrom(...STRINGS), fc.constantFrom(...NUMBERS), fc.boolean());
/** A property value: a scalar most of the time, else what counts as missing. */
const value = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant([1, 2]) },
  { weight: 1, arbitrary: fc.constant({ deep: 1 }) },
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined, freq: 3 });

const propertiesArb = fc
  .record({
    plan: maybe(value),
    amount: maybe(value),
    flag: maybe(value),
    a: maybe(fc.oneof(fc.record({ b: maybe(value) }), scalar)),
    'odd-key': maybe(scalar),
  })
  .map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)));

const eventArb = fc.record({
  user: fc.constantFrom(...USERS),
  name: fc.constantFrom(...NAMES),
  properties: fc.option(propertiesArb, { nil: null, freq: 8 }),
});

/** Registrations of the users (not u3): each fact's MRR, the latest wins; null is none. */
const factsArb = fc.array(
  fc.record({ user: fc.constantFrom('u1', 'u2', '42'), mrr: fc.option(fc.constantFrom(0, 9.5, 50, 120), { nil: null }) }),
  {
    maxLength: 5,
  },
);

const PATHS = [
  'properties.plan',
  'properties.amount',
  'properties.flag',
  'properties.a',
  'properties.a.b',
  'properties.odd-key',
  'properties.absent',
  'event_name',
  'user_id',
  'user.mrr',
] as const;

/** Regex patterns (re2) with the JavaScript pattern that means the same. */
const REGEXES: Record<string, RegExp> = {
  '^p': /^p/,
  o$: /o$/,
  '[0-9]+': /[0-9]+/,
  '(?i)^PRO': /^PRO/i,
  '^$': /^$/,
  'a|e': /a|e/,
};

const textValue = fc.constantFrom(...STRINGS, 'u1', 'checkout', 'r', '2');
const anyValue = fc.oneof(textValue, fc.constantFrom(...NUMBERS, 9.5, 50), fc.boolean());
const numberValue = fc.constantFrom(...NUMBERS, 9.5, 50, 1.5, -1);

const leafArb: fc.Arbitrary<PropertyFilter> = fc.constantFrom(...PATHS).chain((property) =>
  fc.oneof(
    fc.record({ property: fc.constant(property), op: fc.constantFrom<FilterOp>('eq', 'neq'), value: anyValue }),
    fc.record({
      property: fc.constant(property),
      op: fc.constantFrom<FilterOp>('in', 'not_in'),
      value: fc.array(anyValue, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({
      property: fc.constant(property),
      op: fc.constantFrom<FilterOp>('contains', 'not_contains', 'starts_with'),
      value: textValue,
    }),
    fc.record({ property: fc.constant(property), op: fc.constant<FilterOp>('regex'), value: fc.constantFrom(...Object.keys(REGEXES)) }),
    fc.record({ property: fc.constant(property), op: fc.constantFrom<FilterOp>('gt', 'gte', 'lt', 'lte'), value: numberValue }),
    fc.record({
      property: fc.constant(property),
      op: fc.constant<FilterOp>('between'),
      value: fc.tuple(numberValue, numberValue).map(([x, y]) => [Math.min(x, y), Math.max(x, y)]),
    }),
    fc.record({ property: fc.constant(property), op: fc.constantFrom<FilterOp>('is_set', 'is_not_set') }),
  ),
);

const nodeArb: fc.Arbitrary<FilterNode> = fc.oneof(
  { weight: 4, arbitrary: leafArb },
  {
    weight: 1,
    arbitrary: fc
      .array(
        fc.oneof(
          { weight: 3, arbitrary: leafArb },
          { weight: 1, arbitrary: fc.array(leafArb, { minLength: 1, maxLength: 2 }).map((any) => ({ any })) },
        ),
        {
          minLength: 1,
          maxLength: 3,
        },
      )
      .map((any) => ({ any })),
  },
);
const filtersArb = fc.array(nodeArb, { minLength: 1, maxLength: 3 });

// ---------------------------------------------------------------------------------------------
// Reference

type Row = { user: string; name: string; properties: Record<string, unknown> | null };
type Scalar = string | number | boolean;

const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?$/;

function propertyOf(row: Row, keys: string[]): Scalar | undefined {
  let at: unknown = row.properties ?? {};
  for (const key of keys) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean' ? at : undefined;
}

const textOf = (v: Scalar) => (typeof v === 'string' ? v : String(v));
const numberOf = (v: Scalar | undefined) =>
  typeof v === 'number' ? v : typeof v === 'string' && NUMBER_TEXT.test(v) ? Number(v) : undefined;

function equals(v: Scalar | undefined, wanted: unknown): boolean {
  if (v === undefined) return false;
  if (typeof wanted === 'string') return textOf(v) === wanted;
  if (typeof wanted === 'number') return typeof v === 'number' && v === wanted;
  return typeof v === 'boolean' && v === wanted;
}

function positive(v: Scalar | undefined, op: FilterOp, wanted: unknown): boolean {
  const n = numberOf(v);
  switch (op) {
    case 'is_set':
      return v !== undefined;
    case 'eq':
      return equals(v, wanted);
    case 'in':
      return (wanted as unknown[]).some((w) => equals(v, w));
    case 'contains':
      return v !== undefined && textOf(v).includes(wanted as string);
    case 'starts_with':
      return v !== undefined && textOf(v).startsWith(wanted as string);
    case 'regex':
      return v !== undefined && (REGEXES[wanted as string] as RegExp).test(textOf(v));
    case 'gt':
      return n !== undefined && n > (wanted as number);
    case 'gte':
      return n !== undefined && n >= (wanted as number);
    case 'lt':
      return n !== undefined && n < (wanted as number);
    case 'lte':
      return n !== undefined && n <= (wanted as number);
    case 'between': {
      const [low, high] = wanted as [number, number];
      return n !== undefined && n >= low && n <= high;
    }
    default:
      throw new Error(op);
  }
}

const NEGATED: Partial<Record<FilterOp, FilterOp>> = { neq: 'eq', not_in: 'in', not_contains: 'contains', is_not_set: 'is_set' };

function holds(row: Row, filter: FilterNode, mrr: Map<string, number | null>): boolean {
  if ('any' in filter) return filter.any.some((child) => holds(row, child, mrr));
  const base = NEGATED[filter.op];
  let v: Scalar | undefined;
  if (filter.property === 'event_name') v = row.name;
  else if (filter.property === 'user_id') v = row.user;
  else if (filter.property === 'user.mrr') v = mrr.get(row.user) ?? undefined;
  else v = propertyOf(row, filter.property.slice('properties.'.length).split('.'));
  const result = positive(v, base ?? filter.op, filter.value);
  return base ? !result : result;
}

// ---------------------------------------------------------------------------------------------

const START = Date.parse('2026-05-01T00:00:00.000Z');

async function matching(projectId: string, table: 'events' | 'events_by_user', filters: FilterList): Promise<number[]> {
  const condition = filterCondition(filters, { properties: table === 'events' ? 'json' : 'raw', prefix: 'f' });
  const result = await chdb.clickhouse.query({
    query: `SELECT toUnixTimestamp64Milli(created_at) AS at FROM ${table}
            WHERE project_id = {projectId:UUID} AND ${condition.sql} ORDER BY at`,
    query_params: { projectId, ...condition.params },
    format: 'JSONEachRow',
  });
  return (await result.json<{ at: number | string }>()).map((row) => Number(row.at));
}

describe('filterCondition', () => {
  it('keeps exactly the events the definitions keep, in json and raw modes alike', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 20, maxLength: 60, size: 'max' }),
        factsArb,
        fc
          .tuple(
            fc.array(
              leafArb.map((leaf) => [leaf]),
              { minLength: 6, maxLength: 6 },
            ),
            fc.array(filtersArb, { minLength: 3, maxLength: 3 }),
          )
          .map(([a, b]) => [...a, ...b]),
        async (rows, facts, lists) => {
          const projectId = randomUUID();
          const events: IngestEvent[] = rows.map((row, i) => {
            const at = new Date(START + i * 1000).toISOString();
            return {
              project_id: projectId,
              event_id: randomUUID(),
              event_name: row.name,
              user_id: row.user,
              properties: row.properties,
              created_at: at,
              received_at: at,
              id_from_client: false,
            };
          });
          await insertEvents(chdb.clickhouse, events, randomUUID());
          const factRows: FactRow[] = facts.map((fact, i) => ({
            fact_id: String(i + 1),
            project_id: projectId,
            kind: 'sdk_user_registered',
            // Two facts of one instant: the later id wins.
            occurred_at: new Date(START + Math.floor(i / 2) * 1000).toISOString(),
            feedback_id: null,
            user_id: fact.user,
            category: '',
            status: '',
            previous_status: '',
            merged_into_id: null,
            comment_id: null,
            is_admin: false,
            mrr: fact.mrr,
            first_seen_at: null,
          }));
          await insertFacts(chdb.clickhouse, factRows, randomUUID());
          const mrr = new Map<string, number | null>();
          for (const fact of facts) mrr.set(fact.user, fact.mrr);
          for (const filters of lists) {
            const expected = rows.flatMap((row, i) => (filters.every((f) => holds(row, f, mrr)) ? [START + i * 1000] : []));
            const context = JSON.stringify(filters);
            expect(await matching(projectId, 'events', filters), `json ${context}`).toEqual(expected);
            expect(await matching(projectId, 'events_by_user', filters), `raw ${context}`).toEqual(expected);
          }
        },
      ),
      { numRuns: cases(15), plugins: [fc.interruptAfterTimeLimit(caseTimeLimit(40_000))] },
    );
  }, 240_000);

  it('compiles an empty list to a condition that holds for every row', () => {
    expect(filterCondition([], { properties: 'json', prefix: 'x' })).toEqual({ sql: '1', params: {} });
  });

  it('names its parameters by the prefix, so two conditions share a query', () => {
    const one = filterCondition([{ property: 'properties.plan', op: 'eq', value: 'zzvalue' }], { properties: 'raw', prefix: 's0_' });
    const two = filterCondition([{ property: 'properties.plan', op: 'eq', value: 'free' }], { properties: 'raw', prefix: 's1_' });
    expect(Object.keys(one.params).every((name) => name.startsWith('s0_'))).toBe(true);
    expect(Object.keys(two.params).every((name) => name.startsWith('s1_'))).toBe(true);
    expect(one.sql).not.toContain('zzvalue');
  });
});
