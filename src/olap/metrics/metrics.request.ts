import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { eventNamesNamed, firstInvalidRegex } from '../filter-sql.js';
import type { FilterList } from '../filter-types.js';
import { ADMIN_SURFACE_MEASURES, isPredefinedEvent, KEY_SURFACE_MEASURES, type Measure, PREDEFINED_EVENTS } from './measures.js';
import { MetricsError } from './metrics.errors.js';
import type * as q from './metrics.queries.js';
import { type CompareKind, type MetricsWindow, resolveWindow } from './window.js';

/*
 * A metrics request as the planner reads it: who asks (the target), what was asked (the query as
 * the route validated it), and what the plan makes of both (the resolved window, scope, names
 * and measures). Shared by the planner, the session measures, compare and the events feed.
 */

/** Which credential asked: the API key's surface lacks the SDK-user and revenue measures. */
export type Surface = 'key' | 'admin';

export type MetricsTarget = {
  projectId: string;
  plan: Plan;
  surface: Surface;
  /** The project's session_timeout_minutes (docs/sessions.md); default 30. */
  sessionTimeoutMinutes?: number | undefined;
};

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
  /** Validated by src/api/shared/filters.schema.ts; apply to the event measures. */
  filters?: FilterList | undefined;
  compare?: CompareKind | undefined;
};

export type ResolvedQuery = {
  window: MetricsWindow;
  echo: Echo;
  scope: q.Scope;
  names: q.NameFilter;
  measures: Measure[];
  filters: FilterList;
  /** The first day the plan lets this request read (date_to - allowance + 1). */
  floor: Date;
};

export const DAY_MS = 24 * 3600 * 1000;

export const customEventsReadable = (plan: Plan) => PLAN_LIMITS[plan].customEventsReadable;

export function requirePro(what: string): never {
  throw new MetricsError('METRICS_CUSTOM_EVENTS_REQUIRE_PRO', `${what} requires the Pro or Team plan`);
}

/**
 * The window, scope and measure list of a request, with the plan's effects: custom event names
 * excluded below Pro (event_scope predefined_only), the window clamped to the plan's allowance,
 * and the 402 for an `event` filter naming a custom event below Pro.
 */
export function prepare(target: MetricsTarget, query: CommonQuery, fallback?: readonly Measure[]): ResolvedQuery {
  const window = resolveWindow(query, target.plan);
  const allNames = customEventsReadable(target.plan);
  if (query.event !== undefined && !allNames && !isPredefinedEvent(query.event)) {
    requirePro(`filtering by the custom event "${query.event}"`);
  }
  const filters = query.filters ?? [];
  if (!allNames) {
    const custom = eventNamesNamed(filters).find((name) => !isPredefinedEvent(name));
    if (custom !== undefined) requirePro(`an event_name filter naming the custom event "${custom}"`);
  }
  const names: q.NameFilter = query.event !== undefined ? [query.event] : allNames ? null : [...PREDEFINED_EVENTS];
  const surfaceMeasures = target.surface === 'admin' ? ADMIN_SURFACE_MEASURES : KEY_SURFACE_MEASURES;
  return {
    window,
    scope: { projectId: target.projectId, start: window.start, end: window.end },
    names,
    filters,
    floor: new Date(window.end.getTime() - window.retentionWindowDays * DAY_MS),
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

/** A bucket to measure: its start (ISO), and the last day its active users end with (YYYY-MM-DD). */
export type MeasuredBucket = { start: string; lastDay: string };

export const isoDay = (date: Date) => date.toISOString().slice(0, 10);
/** The last day a bucket covers within the window (its clipped end, exclusive, minus an instant). */
export const lastDayOf = (to: Date) => isoDay(new Date(to.getTime() - 1));

/** Refuses a regex filter the engine cannot compile: a 400 naming it, before any query runs. */
export async function checkFilters(client: ClickHouseClient, filters: FilterList): Promise<void> {
  const invalid = await firstInvalidRegex(client, filters);
  if (invalid) throw new MetricsError('METRICS_INVALID_PARAMETER', `${invalid.path}: ${invalid.reason}`);
}
