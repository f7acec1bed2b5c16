/**
 * Plain-TypeScript reference of the insights answers (docs/insights.md), computed from the events
 * themselves by the written definitions, without the implementation's algorithm: the property test
 * compares ClickHouse's answers with these, exactly.
 */

import type { FilterList, FilterNode, PropertyFilter } from '../../src/olap/filter-types.js';

export type RefEvent = { name: string; user: string; t: number; properties: Record<string, unknown> | null };
export type RefScope = { start: number; end: number; names: readonly string[] | null };
export type RefStep = {
  eventName: string;
  where?: Record<string, string | number | boolean> | undefined;
  filters?: FilterList | undefined;
};

/** A JSON number written as a string (docs/metrics.md, "Filters"). */
const NUMBER_TEXT = /^-?(0|[1-9][0-9]*)([.][0-9]+)?([eE][+-]?[0-9]+)?$/;

/** What a filter compares, read from one event: undefined when missing (absent, null, an object or an array). */
function filterValue(e: RefEvent, property: string): unknown {
  if (property === 'event_name') return e.name;
  if (property === 'user_id') return e.user;
  let value: unknown = e.properties;
  for (const key of property.slice('properties.'.length).split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value === null || typeof value === 'object' ? undefined : value;
}

/**
 * One filter on one event, by the definitions: the text of a value is the string, `true`/`false`
 * or the number's decimal text; a number is a JSON number or a string written as one; eq/in with a
 * string compares the text, with a number or a boolean that JSON value; a missing value matches
 * only is_not_set and the negative ops. event_name and user_id are strings. (user.mrr is not used here.)
 */
function leafMatches(e: RefEvent, filter: PropertyFilter): boolean {
  const v = filterValue(e, filter.property);
  const isColumn = filter.property === 'event_name' || filter.property === 'user_id';
  const text = v === undefined ? undefined : String(v);
  const number = typeof v === 'number' ? v : typeof v === 'string' && NUMBER_TEXT.test(v) ? Number(v) : undefined;
  const equals = (w: unknown) => v !== undefined && (typeof w === 'string' ? text === w : !isColumn && typeof w === typeof v && w === v);
  switch (filter.op) {
    case 'eq':
      return equals(filter.value);
    case 'neq':
      return !equals(filter.value);
    case 'in':
      return (filter.value as unknown[]).some(equals);
    case 'not_in':
      return !(filter.value as unknown[]).some(equals);
    case 'contains':
      return text?.includes(filter.value as string) === true;
    case 'not_contains':
      return text?.includes(filter.value as string) !== true;
    case 'starts_with':
      return text?.startsWith(filter.value as string) === true;
    case 'regex':
      return text !== undefined && new RegExp(filter.value as string).test(text);
    case 'gt':
      return number !== undefined && number > (filter.value as number);
    case 'gte':
      return number !== undefined && number >= (filter.value as number);
    case 'lt':
      return number !== undefined && number < (filter.value as number);
    case 'lte':
      return number !== undefined && number <= (filter.value as number);
    case 'between': {
      const [low, high] = filter.value as [number, number];
      return number !== undefined && number >= low && number <= high;
    }
    case 'is_set':
      return v !== undefined;
    case 'is_not_set':
      return v === undefined;
  }
}

const nodeMatches = (e: RefEvent, node: FilterNode): boolean =>
  'any' in node ? node.any.some((child) => nodeMatches(e, child)) : leafMatches(e, node);

/** Every filter of the list holds for the event (an empty list holds for all). */
export const filtersMatch = (e: RefEvent, filters: FilterList | undefined) => (filters ?? []).every((node) => nodeMatches(e, node));

const inScope = (e: RefEvent, scope: RefScope) =>
  e.t >= scope.start && e.t < scope.end && (scope.names === null || scope.names.includes(e.name));

/** A property as comparable text: strings as they are, other JSON values as JSON text, missing null. */
export function propertyText(e: RefEvent, key: string): string | null {
  if (e.properties === null || !Object.hasOwn(e.properties, key)) return null;
  const value = e.properties[key];
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Step equality on properties: same JSON type, same value. */
export function stepMatches(e: RefEvent, step: RefStep): boolean {
  if (e.name !== step.eventName || !filtersMatch(e, step.filters)) return false;
  for (const [key, value] of Object.entries(step.where ?? {})) {
    if (e.properties === null || !Object.hasOwn(e.properties, key)) return false;
    const actual = e.properties[key];
    if (typeof actual !== typeof value || actual !== value) return false;
  }
  return true;
}

/** The exact median (mean of the two middle values for an even count). */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export type RefFunnelRow = { breakdown: string | null; users: number[]; median_ms: (number | null)[] };

/**
 * Definition: within one user's events (and, with a breakdown, those carrying one value of the
 * property), a chain for step n is events e1..en, ei matching step i (one event may match several
 * consecutive steps), at non-decreasing times, en at most windowMs after e1. The user reaches step
 * n when such a chain exists. Time to convert to step n: the earliest end of such a chain, minus
 * the latest start among the chains that end then.
 *
 * Computed for each possible start: the earliest time each step can be reached from it.
 */
export function referenceFunnel(
  events: RefEvent[],
  scope: RefScope,
  steps: RefStep[],
  windowMs: number,
  breakdown?: string,
  filters?: FilterList,
): RefFunnelRow[] {
  const groups = new Map<string, { breakdown: string | null; events: RefEvent[] }>();
  for (const e of events) {
    if (!inScope(e, scope) || !steps.some((s) => s.eventName === e.name) || !filtersMatch(e, filters)) continue;
    const value = breakdown === undefined ? null : propertyText(e, breakdown);
    const key = JSON.stringify([e.user, value]);
    const group = groups.get(key) ?? { breakdown: value, events: [] };
    group.events.push(e);
    groups.set(key, group);
  }
  const byValue = new Map<string | null, { levels: number[]; durations: number[][] }>();
  for (const group of groups.values()) {
    const matchesOf = steps.map((step) => group.events.filter((e) => stepMatches(e, step)).map((e) => e.t));
    const reachedAt: (number | null)[] = steps.map(() => null); // earliest end per step
    const latestStart: number[] = steps.map(() => Number.NEGATIVE_INFINITY);
    for (const s of matchesOf[0] ?? []) {
      let previous = s;
      for (let k = 0; k < steps.length; k++) {
        const candidates = (matchesOf[k] ?? []).filter((t) => t >= previous && t <= s + windowMs);
        if (k > 0 && candidates.length === 0) break;
        const end = k === 0 ? s : Math.min(...candidates);
        const best = reachedAt[k];
        if (best === null || best === undefined || end < best) {
          reachedAt[k] = end;
          latestStart[k] = s;
        } else if (end === best && s > (latestStart[k] as number)) {
          latestStart[k] = s;
        }
        previous = end;
      }
    }
    const level = reachedAt.filter((t) => t !== null).length;
    if (level === 0) continue;
    const entry = byValue.get(group.breakdown) ?? { levels: [], durations: steps.map(() => []) };
    entry.levels.push(level);
    reachedAt.forEach((t, k) => {
      if (t !== null) entry.durations[k]?.push(t - (latestStart[k] as number));
    });
    byValue.set(group.breakdown, entry);
  }
  return [...byValue.entries()].map(([value, entry]) => ({
    breakdown: value,
    users: steps.map((_, k) => entry.levels.filter((level) => level > k).length),
    median_ms: entry.durations.map((d) => median(d)),
  }));
}

export type RefRetentionRow = { cohort_start: string; period: number; users: number };

const DAY_MS = 86_400_000;
const dayOf = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;
/** 1970-01-01 was a Thursday: Monday-based weeks start 3 days before each multiple of 7 days. */
const mondayOf = (t: number) => dayOf(t) - ((Math.floor(t / DAY_MS) + 3) % 7) * DAY_MS;

/**
 * Definition: a user's cohort is the bucket (UTC day, or week from Monday) of their first
 * cohort event (any event when none is named) in the window; they count in period p ≥ 1 of
 * that cohort when they did a return event (any event when none is named) in the window in the
 * bucket p intervals after the cohort's; period 0 counts every member.
 */
export function referenceRetention(
  events: RefEvent[],
  scope: RefScope,
  query: {
    cohortEvent?: string | undefined;
    returnEvent?: string | undefined;
    interval: 'day' | 'week';
    periods: number;
    filters?: FilterList | undefined;
  },
): RefRetentionRow[] {
  const bucket = query.interval === 'day' ? dayOf : mondayOf;
  const length = query.interval === 'day' ? DAY_MS : 7 * DAY_MS;
  const perUser = new Map<string, { first: number | null; returns: Set<number> }>();
  for (const e of events) {
    if (!inScope(e, scope) || !filtersMatch(e, query.filters)) continue;
    const u = perUser.get(e.user) ?? { first: null, returns: new Set<number>() };
    if (query.cohortEvent === undefined || e.name === query.cohortEvent) u.first = u.first === null ? e.t : Math.min(u.first, e.t);
    if (query.returnEvent === undefined || e.name === query.returnEvent) u.returns.add(bucket(e.t));
    perUser.set(e.user, u);
  }
  const counts = new Map<string, number>();
  const add = (cohort: number, period: number) => {
    const key = JSON.stringify([cohort, period]);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  for (const u of perUser.values()) {
    if (u.first === null) continue;
    const cohort = bucket(u.first);
    add(cohort, 0);
    for (const b of u.returns) {
      const period = Math.round((b - cohort) / length);
      if (b > cohort && period <= query.periods) add(cohort, period);
    }
  }
  return [...counts.entries()].map(([key, users]) => {
    const [cohort, period] = JSON.parse(key) as [number, number];
    return { cohort_start: new Date(cohort).toISOString().slice(0, 10), period, users };
  });
}

export type RefPathsQuery = {
  startEvent?: string | undefined;
  endEvent?: string | undefined;
  depth: number;
  excludeEvents: readonly string[];
  filters?: FilterList | undefined;
};
export type RefPaths = {
  users: number;
  edges: { step: number; from: string; to: string; users: number }[];
  paths: { events: string[]; users: number }[];
};

/** Byte order of UTF-8 text, as ClickHouse compares strings. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Arrays of names compared as ClickHouse compares them: element by element, then the shorter first. */
function byNames(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = byBytes(a[i] as string, b[i] as string);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

/**
 * Paths (docs/insights.md, "Paths"), by the words of the definition: per user, the names of their
 * events in scope and not excluded, in time order (same time: name order); from the first start
 * event, or up to the last end event; consecutive repeats collapsed; the first `depth` names (with
 * an end event, the last ones). Edges (all of them, unordered) and the top 10 paths by users, ties
 * by the names.
 */
export function referencePaths(events: RefEvent[], scope: RefScope, query: RefPathsQuery): RefPaths {
  const byUser = new Map<string, RefEvent[]>();
  for (const e of events) {
    if (!inScope(e, scope) || query.excludeEvents.includes(e.name) || !filtersMatch(e, query.filters)) continue;
    byUser.set(e.user, [...(byUser.get(e.user) ?? []), e]);
  }
  const pathUsers = new Map<string, number>();
  for (const own of byUser.values()) {
    let names = [...own].sort((x, y) => x.t - y.t || byBytes(x.name, y.name)).map((e) => e.name);
    if (query.startEvent !== undefined) {
      const first = names.indexOf(query.startEvent);
      names = first < 0 ? [] : names.slice(first);
    } else if (query.endEvent !== undefined) {
      names = names.slice(0, names.lastIndexOf(query.endEvent) + 1);
    }
    const collapsed = names.filter((name, i) => i === 0 || names[i - 1] !== name);
    const path = query.endEvent !== undefined ? collapsed.slice(-query.depth) : collapsed.slice(0, query.depth);
    if (path.length === 0) continue;
    const key = JSON.stringify(path);
    pathUsers.set(key, (pathUsers.get(key) ?? 0) + 1);
  }
  const edges = new Map<string, { step: number; from: string; to: string; users: number }>();
  let users = 0;
  for (const [key, n] of pathUsers) {
    users += n;
    const path = JSON.parse(key) as string[];
    for (let i = 1; i < path.length; i++) {
      const edgeKey = JSON.stringify([i + 1, path[i - 1], path[i]]);
      const edge = edges.get(edgeKey) ?? { step: i + 1, from: path[i - 1] as string, to: path[i] as string, users: 0 };
      edge.users += n;
      edges.set(edgeKey, edge);
    }
  }
  const paths = [...pathUsers]
    .map(([key, n]) => ({ events: JSON.parse(key) as string[], users: n }))
    .sort((a, b) => b.users - a.users || byNames(a.events, b.events))
    .slice(0, 10);
  return { users, edges: [...edges.values()], paths };
}
