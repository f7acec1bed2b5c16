import type { ClickHouseClient } from './clickhouse.js';
import type { FilterList, FilterNode, PropertyFilter, SqlCondition } from './filter-types.js';

/*
 * The compiler of the filter language (docs/metrics.md, "Filters"): a validated FilterList becomes
 * one boolean SQL expression over an event row. Two compile modes read the same properties:
 * - 'json': the `events.properties` JSON column, one sub-column per path (`properties.plan`), so a
 *   filter reads only the paths it names;
 * - 'raw': a `properties_raw` String column of JSON text (`events_by_user`), with JSONType and
 *   JSONExtract* on the path's keys, bound as parameters.
 * Both give the same answer for every op and type (test/olap/filters-property.test.ts).
 *
 * What a value is, in both modes:
 * - a property whose value is JSON null, an object or an array is missing (the JSON column cannot
 *   tell a null from a missing key, and keeps objects as their leaf paths only);
 * - its text is the string itself, `true`/`false`, or the number as ClickHouse prints it;
 * - it is a number when it is a JSON number, or a string written as a JSON number.
 */

/** A key of a property path: bound as a parameter in 'raw' mode, an identifier in 'json' mode. */
export const PROPERTY_KEY = /^[A-Za-z0-9_$@-][A-Za-z0-9_$@\-: ]{0,99}$/;
/** The most keys of one property path (`properties.a.b.c`). */
export const MAX_PATH_KEYS = 10;
/** The longest regex pattern a filter may hold. */
export const MAX_REGEX_LENGTH = 1000;

/** What a filter's `property` names. */
export type FilterTarget = { kind: 'event_name' } | { kind: 'user_id' } | { kind: 'user.mrr' } | { kind: 'property'; keys: string[] };

/**
 * The target of a `property` string, or undefined when it is none of the known forms:
 * `properties.<key>[.<key>…]` (each key matching PROPERTY_KEY), `event_name`, `user_id`, `user.mrr`.
 */
export function parseFilterTarget(property: string): FilterTarget | undefined {
  if (property === 'event_name' || property === 'user_id' || property === 'user.mrr') return { kind: property };
  if (!property.startsWith('properties.')) return undefined;
  const keys = property.slice('properties.'.length).split('.');
  if (keys.length > MAX_PATH_KEYS || !keys.every((key) => PROPERTY_KEY.test(key))) return undefined;
  return { kind: 'property', keys };
}

/** The ops whose value is one string, compared with the value's text. */
export const TEXT_OPS = ['contains', 'not_contains', 'starts_with', 'regex'] as const;
/** The ops whose value is a number (`between`: [low, high]), compared as numbers. */
export const NUMERIC_OPS = ['gt', 'gte', 'lt', 'lte', 'between'] as const;

/**
 * A JSON number written as a string: what "a string that parses as a number" means. Stricter than
 * toFloat64OrNull (no `inf`, `nan`, `0x1F`, leading `+`, spaces or `1.`), and the same test the
 * reference in the property tests applies.
 */
const NUMBER_TEXT = `'^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?$'`;

/** The SQL pieces a comparison needs about one path's value, each NULL when it is missing. */
type Value = {
  /** 1 when the value is present (not null, an object or an array), else 0. */
  set: string;
  /** Nullable(String): the value's text. */
  text: string;
  /** Nullable(Float64): a JSON number only. */
  jsonNumber: string;
  /** Nullable(Float64): a JSON number or a string written as one. */
  number: string;
  /** Nullable(Bool): a JSON boolean only. */
  bool: string;
  /**
   * `text IN list` where it can be cheaper than computing every row's text: the JSON column
   * compares a string variant directly, and renders other types only for strings that could be
   * their text (docs/metrics.md, "Speed").
   */
  textIn?: (strings: string[], params: Params) => string;
};

type Params = { add(value: unknown, type: string): string; values: Record<string, unknown> };

function paramsOf(prefix: string): Params {
  const values: Record<string, unknown> = {};
  let next = 0;
  return {
    values,
    add(value, type) {
      const name = `${prefix}${next++}`;
      values[name] = value;
      return `{${name}:${type}}`;
    },
  };
}

/**
 * `properties.<key>…` as a JSON sub-column. An identifier, not a parameter: getSubcolumn() takes
 * the path as a parameter but reads the whole JSON column to answer it (EXPLAIN shows `properties`
 * read, where `properties.plan` reads one path), which a filter over a year of events cannot
 * afford. Each key matched PROPERTY_KEY (no backquote, backslash, dot or leading `:`), so quoting
 * it in backquotes names exactly that key.
 */
function jsonValue(keys: string[]): Value {
  for (const key of keys) if (!PROPERTY_KEY.test(key)) throw new Error('filter-sql: unvalidated property key');
  const path = `properties.${keys.map((key) => `\`${key}\``).join('.')}`;
  const typed = (type: string) => `${path}.:\`${type}\``;
  const set = `(isNotNull(${path}) AND NOT startsWith(dynamicType(${path}), 'Array'))`;
  const jsonNumber = `coalesce(toFloat64(${typed('Int64')}), toFloat64(${typed('UInt64')}), ${typed('Float64')})`;
  return {
    set,
    text: `if(${set}, toString(${path}), NULL)`,
    textIn: (strings, params) => {
      const direct = sure(`${typed('String')} IN ${params.add(strings, 'Array(String)')}`);
      const rendered = strings.filter(couldBeRendered);
      if (rendered.length === 0) return direct;
      return `(${direct} OR ${sure(`isNull(${typed('String')}) AND ${set} AND toString(${path}) IN ${params.add(rendered, 'Array(String)')}`)})`;
    },
    jsonNumber,
    number: `coalesce(${jsonNumber}, if(match(${typed('String')}, ${NUMBER_TEXT}), toFloat64OrNull(${typed('String')}), NULL))`,
    bool: typed('Bool'),
  };
}

/** `properties.<key>…` read from the JSON text in `properties_raw`, the keys bound as parameters. */
function rawValue(keys: string[], params: Params): Value {
  const args = `properties_raw, ${keys.map((key) => params.add(key, 'String')).join(', ')}`;
  const type = `JSONType(${args})`;
  const string = `JSONExtractString(${args})`;
  const numeric = `${type} IN ('Int64', 'UInt64', 'Double')`;
  return {
    set: `(${type} NOT IN ('Null', 'Array', 'Object'))`,
    text: `multiIf(${type} = 'String', ${string}, ${type} = 'Bool', if(JSONExtractBool(${args}), 'true', 'false'),
             ${type} = 'Int64', toString(JSONExtractInt(${args})), ${type} = 'UInt64', toString(JSONExtractUInt(${args})),
             ${type} = 'Double', toString(JSONExtractFloat(${args})), NULL)`,
    jsonNumber: `if(${numeric}, JSONExtractFloat(${args}), NULL)`,
    number: `multiIf(${numeric}, JSONExtractFloat(${args}),
               ${type} = 'String' AND match(${string}, ${NUMBER_TEXT}), toFloat64OrNull(${string}), NULL)`,
    bool: `if(${type} = 'Bool', JSONExtractBool(${args}) = 1, NULL)`,
  };
}

/** A column of the row (event_name, user_id): always present, its text is itself. */
function columnValue(column: 'event_name' | 'user_id'): Value {
  return {
    set: '1',
    text: `toString(${column})`,
    jsonNumber: "CAST(NULL, 'Nullable(Float64)')",
    number: `if(match(toString(${column}), ${NUMBER_TEXT}), toFloat64OrNull(toString(${column})), NULL)`,
    bool: "CAST(NULL, 'Nullable(Bool)')",
  };
}

const NEGATION: Partial<Record<PropertyFilter['op'], PropertyFilter['op']>> = {
  neq: 'eq',
  not_in: 'in',
  not_contains: 'contains',
  is_not_set: 'is_set',
};

/** 0 or 1, never NULL: a comparison with a missing value is false, so its negation is true. */
const sure = (expression: string) => `ifNull(${expression}, 0)`;

/**
 * Whether a string could be the text of a value that is not a JSON string: a number, `true` or
 * `false`, or a date the JSON column inferred from events stored before inference was turned off.
 * Those all start with a digit, a minus sign, `i`/`n` (inf, nan), `t` or `f`.
 */
const couldBeRendered = (text: string) => /^(-|[0-9]|inf|nan|true$|false$)/i.test(text);

/** `value = v` for one JSON value v of `eq`/`in`: a string compares text, a number or boolean its JSON value. */
function equalsAny(value: Value, list: unknown[], params: Params): string {
  const strings = list.filter((v): v is string => typeof v === 'string');
  const numbers = list.filter((v): v is number => typeof v === 'number');
  const booleans = list.filter((v): v is boolean => typeof v === 'boolean');
  const parts: string[] = [];
  if (strings.length > 0) {
    parts.push(value.textIn ? value.textIn(strings, params) : sure(`${value.text} IN ${params.add(strings, 'Array(String)')}`));
  }
  if (numbers.length > 0) parts.push(sure(`${value.jsonNumber} IN ${params.add(numbers, 'Array(Float64)')}`));
  for (const b of new Set(booleans)) parts.push(sure(`${value.bool} = ${b ? 'true' : 'false'}`));
  return parts.length === 0 ? '0' : `(${parts.join(' OR ')})`;
}

/** The condition of a positive op (every op but the four negatives) on one value. */
function positive(value: Value, op: PropertyFilter['op'], v: unknown, params: Params): string {
  switch (op) {
    case 'is_set':
      return value.set;
    case 'eq':
      return equalsAny(value, [v], params);
    case 'in':
      return equalsAny(value, v as unknown[], params);
    case 'contains':
      return sure(`position(${value.text}, ${params.add(v, 'String')}) > 0`);
    case 'starts_with':
      return sure(`startsWith(${value.text}, ${params.add(v, 'String')})`);
    case 'regex':
      return sure(`match(${value.text}, ${params.add(v, 'String')})`);
    case 'gt':
      return sure(`${value.number} > ${params.add(v, 'Float64')}`);
    case 'gte':
      return sure(`${value.number} >= ${params.add(v, 'Float64')}`);
    case 'lt':
      return sure(`${value.number} < ${params.add(v, 'Float64')}`);
    case 'lte':
      return sure(`${value.number} <= ${params.add(v, 'Float64')}`);
    case 'between': {
      const [low, high] = v as [number, number];
      return sure(`${value.number} BETWEEN ${params.add(low, 'Float64')} AND ${params.add(high, 'Float64')}`);
    }
    default:
      throw new Error(`filter-sql: ${op} is not a positive op`);
  }
}

/**
 * `user.mrr`: the SDK user's latest MRR (facts `sdk_user_registered`, the last by (occurred_at,
 * fact_id), as the admin measures order them; a latest MRR of null is none). An unregistered user
 * has none. The positive op becomes the set of users whose MRR passes it.
 */
function mrrCondition(op: PropertyFilter['op'], v: unknown, params: Params): string {
  const mrr: Value = {
    set: 'isNotNull(m)',
    text: 'toString(m)',
    jsonNumber: 'm',
    number: 'm',
    bool: "CAST(NULL, 'Nullable(Bool)')",
  };
  return `user_id IN (
    SELECT user_id FROM (
      SELECT user_id, argMax(tuple(mrr), (occurred_at, fact_id)).1 AS m
      FROM facts
      WHERE project_id = {projectId:UUID} AND kind = 'sdk_user_registered'
      GROUP BY user_id
    ) WHERE ${positive(mrr, op, v, params)})`;
}

function leaf(filter: PropertyFilter, mode: 'json' | 'raw', params: Params): string {
  const target = parseFilterTarget(filter.property);
  if (!target) throw new Error('filter-sql: unvalidated property');
  const negated = NEGATION[filter.op];
  const op = negated ?? filter.op;
  let condition: string;
  if (target.kind === 'user.mrr') {
    condition = mrrCondition(op, filter.value, params);
  } else {
    const value =
      target.kind === 'property' ? (mode === 'json' ? jsonValue(target.keys) : rawValue(target.keys, params)) : columnValue(target.kind);
    condition = positive(value, op, filter.value, params);
  }
  return negated ? `(NOT ${condition})` : condition;
}

function node(filter: FilterNode, mode: 'json' | 'raw', params: Params): string {
  if ('any' in filter) {
    return filter.any.length === 0 ? '0' : `(${filter.any.map((child) => node(child, mode, params)).join(' OR ')})`;
  }
  return leaf(filter, mode, params);
}

/**
 * One condition over an event row that holds when every node of `filters` holds (docs/metrics.md,
 * "Filters"). `filters` must have been validated (src/api/shared/filters.schema.ts): an unknown
 * path here is a programming error, thrown as such. Parameters are named `${prefix}0`, `${prefix}1`,
 * …, so several conditions can sit in one query; the condition may also read `{projectId:UUID}`.
 */
export function filterCondition(filters: FilterList, options: { properties: 'json' | 'raw'; prefix: string }): SqlCondition {
  if (filters.length === 0) return { sql: '1', params: {} };
  const params = paramsOf(options.prefix);
  const sql = filters.map((filter) => node(filter, options.properties, params)).join(' AND ');
  return { sql: filters.length === 1 ? sql : `(${sql})`, params: params.values };
}

/** Every leaf of a list with its position (`filters.2.any.0`), depth first. */
export function filterLeaves(filters: FilterList, base = 'filters'): { path: string; filter: PropertyFilter }[] {
  return filters.flatMap((filter, index) =>
    'any' in filter ? filterLeaves(filter.any, `${base}.${index}.any`) : [{ path: `${base}.${index}`, filter }],
  );
}

/**
 * The position of the first `regex` filter whose pattern the engine cannot compile (ClickHouse's
 * re2), with the engine's reason; undefined when all compile. One small query per pattern: the
 * engine itself is the only exact judge of its syntax.
 */
export async function firstInvalidRegex(
  client: ClickHouseClient,
  filters: FilterList,
  base = 'filters',
): Promise<{ path: string; reason: string } | undefined> {
  for (const { path, filter } of filterLeaves(filters, base)) {
    if (filter.op !== 'regex' || typeof filter.value !== 'string') continue;
    try {
      const result = await client.query({
        query: "SELECT match('', {pattern:String}) AS matched",
        query_params: { pattern: filter.value },
        format: 'JSONEachRow',
      });
      await result.json();
    } catch (error) {
      const message = String((error as Error).message ?? error);
      if (/re2|regexp|regular expression/i.test(message)) {
        const reason = /cannot compile re2: (.*?)(\. Look at|$)/s.exec(message)?.[1]?.trim() ?? 'the pattern does not compile';
        return { path: `${path}.value`, reason: `not a valid re2 pattern (${reason.slice(0, 200)})` };
      }
      throw error;
    }
  }
  return undefined;
}

/**
 * The numeric value of one property path (Nullable(Float64): a JSON number, or a string written as
 * one; NULL otherwise), for the property math of the metrics (`sum:properties.amount`). The keys
 * must match PROPERTY_KEY; parameters are named by `prefix` as in filterCondition.
 */
export function propertyNumber(keys: string[], options: { properties: 'json' | 'raw'; prefix: string }): SqlCondition {
  const params = paramsOf(options.prefix);
  const value = options.properties === 'json' ? jsonValue(keys) : rawValue(keys, params);
  return { sql: value.number, params: params.values };
}

/**
 * The event names that `event_name` filters name by equality (eq, neq, in, not_in), for the plan
 * rule that a custom event name below Pro is a 402, whatever the op.
 */
export function eventNamesNamed(filters: FilterList): string[] {
  const names: string[] = [];
  for (const { filter } of filterLeaves(filters)) {
    if (filter.property !== 'event_name') continue;
    if (filter.op === 'eq' || filter.op === 'neq') names.push(...(typeof filter.value === 'string' ? [filter.value] : []));
    if (filter.op === 'in' || filter.op === 'not_in')
      names.push(...(filter.value as unknown[]).filter((v): v is string => typeof v === 'string'));
  }
  return names;
}
