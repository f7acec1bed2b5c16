import type { ClickHouseClient } from '../clickhouse.js';
import type { SqlCondition } from '../filter-types.js';
import { queryRows } from '../query-rows.js';
import { chTime, clickhouseTimeToIso } from '../time.js';
import type { PropertyMath } from './measures.js';
import { QUANTILE_LEVEL } from './measures.js';
import { type BucketSpec, type NameFilter, nameCondition, type Scope, scopeParams, timeBucket } from './metrics.queries.js';

/*
 * The event measures that the rollups cannot answer (docs/metrics.md, "Filters" and "Measures"):
 * any event measure under `filters`, the property math, and the active users. They read `events`
 * itself, whose (project, time) order prunes a window to its own parts and whose JSON column gives
 * each property path its own sub-column, so a filter or a `sum:` reads the paths it names and not
 * the JSON text (the choice over events_by_user, measured: docs/metrics.md, "Speed").
 */

/** A breakdown's key over an event row: the event name, or one top-level property's text. */
export type KeyDimension = { kind: 'event_name' } | { kind: 'property'; key: string };

/**
 * The key of a row in a breakdown, as eventMeasuresByProperty gives it: string values unquoted,
 * other values as their JSON text, a missing key as NULL.
 */
function keyExpression(dimension: KeyDimension): string {
  if (dimension.kind === 'event_name') return 'toString(event_name)';
  return `if(NOT JSONHas(properties_raw, {dimKey:String}), NULL,
            if(JSONType(properties_raw, {dimKey:String}) = 'String',
               JSONExtractString(properties_raw, {dimKey:String}),
               JSONExtractRaw(properties_raw, {dimKey:String})))`;
}

const keyParams = (dimension: KeyDimension | undefined) => (dimension?.kind === 'property' ? { dimKey: dimension.key } : {});

/** One property measure of a query: its math over a numeric expression (propertyNumber()). */
export type MathColumn = { math: PropertyMath; number: SqlCondition };

function aggregate(column: MathColumn): string {
  const level = QUANTILE_LEVEL[column.math];
  if (level !== undefined) return `quantileExactInclusive(${level})(${column.number.sql})`;
  return `${column.math}(${column.number.sql})`;
}

export type RawEventRow = {
  bucket: string;
  key: string | null;
  event_count: number;
  unique_event_users: number;
  /** The property measures, in the order asked (null: no numeric value). */
  math: (number | null)[];
};

type RawRow = { bucket?: string; key?: string | null; event_count: number; unique_event_users: number } & Record<string, unknown>;

/**
 * event_count, unique_event_users and property math per bucket (or per key of a breakdown) over
 * the events in scope that match `filter` (compiled in 'json' mode). `withUsers` false leaves the
 * exact distinct count out when nothing asks for it (it is most of the cost of a year).
 */
export async function rawEventMeasures(
  client: ClickHouseClient,
  scope: Scope,
  spec: {
    bucket: BucketSpec;
    names: NameFilter;
    filter: SqlCondition;
    math: MathColumn[];
    withUsers: boolean;
    dimension?: KeyDimension | undefined;
  },
): Promise<RawEventRow[]> {
  const group = spec.dimension ? `${keyExpression(spec.dimension)} AS key` : `toString(${timeBucket(spec.bucket, 'created_at')}) AS bucket`;
  const math = spec.math.map((column, i) => `, ${aggregate(column)} AS m${i}`).join('');
  const rows = await queryRows<RawRow>(
    client,
    `SELECT ${group}, count() AS event_count, ${spec.withUsers ? 'uniqExact(user_id)' : '0'} AS unique_event_users${math}
     FROM events
     WHERE project_id = {projectId:UUID}
       AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')} ${nameCondition(spec.names)}
       AND ${spec.filter.sql}
     GROUP BY ${spec.dimension ? 'key' : 'bucket'}`,
    {
      ...scopeParams(scope),
      names: spec.names ?? [],
      ...spec.filter.params,
      ...Object.assign({}, ...spec.math.map((column) => column.number.params)),
      ...keyParams(spec.dimension),
    },
  );
  return rows.map((row) => ({
    bucket: row.bucket !== undefined ? clickhouseTimeToIso(row.bucket) : '',
    key: row.key ?? null,
    event_count: Number(row.event_count),
    unique_event_users: Number(row.unique_event_users),
    math: spec.math.map((_, i) => {
      const value = row[`m${i}`];
      return value === null || value === undefined || Number.isNaN(Number(value)) ? null : Number(value);
    }),
  }));
}

export type ActiveUsersRow = { last: string; key: string | null; dau: number; wau: number; mau: number };

const DAY_MS = 24 * 3600 * 1000;
/** Last days per bit mask: a UInt64 holds 64. */
const MASK_BITS = 64;
const TRAILING = { dau: 1, wau: 7, mau: 30 } as const;

/**
 * Distinct users with an event in scope in the trailing 1, 7 and 30 days ending with each day of
 * `lasts` (YYYY-MM-DD, ascending), over events from `readFrom` (which the caller put no earlier
 * than the plan allows) to the window's end. One pass, grouped by user: each event's day maps
 * (transform, from arrays computed here) to the bit mask of the last days whose trailing days hold
 * it; a user's masks are OR-ed together, and each bit's users summed. Exact, like uniqExact, and it
 * reads each event once whatever the number of buckets (64 last days per mask; more use more masks).
 * Only the trailing windows in `days` are computed (the others answer 0).
 */
export async function activeUsers(
  client: ClickHouseClient,
  scope: Scope,
  spec: {
    readFrom: Date;
    lasts: string[];
    days: number;
    names: NameFilter;
    filter: SqlCondition;
    dimension?: KeyDimension | undefined;
    measures?: readonly ('dau' | 'wau' | 'mau')[] | undefined;
  },
): Promise<ActiveUsersRow[]> {
  const keyed = spec.dimension !== undefined;
  const asked = (spec.measures ?? (['dau', 'wau', 'mau'] as const)).filter((m) => TRAILING[m] <= spec.days);
  const lastTimes = spec.lasts.map((day) => Date.parse(`${day}T00:00:00Z`));
  const days: string[] = [];
  for (let t = Date.parse(`${spec.readFrom.toISOString().slice(0, 10)}T00:00:00Z`); t < scope.end.getTime(); t += DAY_MS) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  const chunks = Math.ceil(lastTimes.length / MASK_BITS);
  const params: Record<string, unknown> = {
    ...scopeParams(scope),
    readFrom: chTime(spec.readFrom),
    days,
    names: spec.names ?? [],
    ...spec.filter.params,
    ...keyParams(spec.dimension),
  };
  const inner: string[] = [];
  const outer: string[] = [];
  for (const measure of asked) {
    for (let c = 0; c < chunks; c++) {
      const inChunk = lastTimes.slice(c * MASK_BITS, (c + 1) * MASK_BITS);
      // Bit i of a day's mask: the day is one of the trailing days of the chunk's i-th last day.
      params[`${measure}_${c}`] = days.map((day) => {
        const t = Date.parse(`${day}T00:00:00Z`);
        let mask = 0n;
        inChunk.forEach((last, i) => {
          if (t <= last && last - t < TRAILING[measure] * DAY_MS) mask |= 1n << BigInt(i);
        });
        return mask;
      });
      inner.push(
        `groupBitOr(transform(toDate(created_at, 'UTC'), {days:Array(Date)}, {${measure}_${c}:Array(UInt64)}, toUInt64(0))) AS ${measure}_${c}`,
      );
      outer.push(`sumForEach(arrayMap(i -> toUInt64(bitTest(${measure}_${c}, i)), range(${inChunk.length}))) AS ${measure}_${c}`);
    }
  }
  if (asked.length === 0 || lastTimes.length === 0 || days.length === 0) return [];
  const rows = await queryRows<Record<string, unknown>>(
    client,
    `SELECT ${keyed ? 'key, ' : ''}${outer.join(', ')}
     FROM (
       SELECT user_id, ${keyed ? `${keyExpression(spec.dimension as KeyDimension)} AS key, ` : ''}${inner.join(', ')}
       FROM events
       WHERE project_id = {projectId:UUID}
         AND created_at >= {readFrom:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')} ${nameCondition(spec.names)}
         AND ${spec.filter.sql}
       GROUP BY user_id${keyed ? ', key' : ''}
     )
     ${keyed ? 'GROUP BY key' : ''}`,
    params,
  );
  const result: ActiveUsersRow[] = [];
  for (const row of rows) {
    spec.lasts.forEach((last, index) => {
      const chunk = Math.floor(index / MASK_BITS);
      const bit = index % MASK_BITS;
      const at = (measure: 'dau' | 'wau' | 'mau') =>
        asked.includes(measure) ? Number((row[`${measure}_${chunk}`] as (number | string)[] | undefined)?.[bit] ?? 0) : 0;
      result.push({ last, key: (row.key as string | null | undefined) ?? null, dau: at('dau'), wau: at('wau'), mau: at('mau') });
    });
  }
  return result;
}
