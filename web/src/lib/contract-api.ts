import type { Schemas } from '../api/client';
import { api, unwrap } from '../api/client';
import type { FilterNode } from './filters';

/*
 * Calls of the metrics and insights routes with the issue-38 parameters (filters, the new
 * measures, compare, sessions, event properties, the user timeline), and the shapes they answer
 * (docs/metrics.md, docs/sessions.md). The measures are free text here (`p90:properties.x`),
 * which the generated enum of measure names does not hold, so these calls go through the client
 * untyped and type their answers below.
 */
type Get = (
  path: string,
  init: { params: { path: Record<string, string>; query: Record<string, unknown> } },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
const get = api.GET as unknown as Get;

export type MeasureValues = Record<string, number | null>;
export type CompareBlock = { date_from: string; date_to: string; retention_clamped: boolean };
export type Echo = Pick<
  Schemas['AdminMetricsSummary'],
  'event_scope' | 'retention_clamped' | 'retention_window_days' | 'date_from' | 'date_to'
>;
export type SummaryAnswer = Echo & {
  measures: MeasureValues;
  compare?: CompareBlock & { measures: MeasureValues; change: MeasureValues };
};
export type Bucket = { start: string; measures: MeasureValues };
export type TimeseriesAnswer = Echo & { interval: string; buckets: Bucket[]; compare?: CompareBlock & { buckets: Bucket[] } };
export type BreakdownRow = { key: string | null; measures: MeasureValues; change?: MeasureValues };
export type BreakdownAnswer = Echo & { dimension: string; rows: BreakdownRow[]; compare?: CompareBlock & { rows: BreakdownRow[] } };
export type EventProperty = { property: string; types: string[]; top_values: { value: unknown; count: number }[] };
export type EventPropertiesAnswer = { date_from: string; date_to: string; retention_clamped: boolean; properties: EventProperty[] };
export type TimelineEvent = { id: string; event_name: string; properties: Record<string, unknown> | null; created_at: string };
export type TimelineSession = {
  started_at: string;
  ended_at: string;
  duration_seconds: number;
  event_count: number;
  events: TimelineEvent[];
  events_truncated: boolean;
};
export type TimelineAnswer = {
  date_from: string;
  date_to: string;
  retention_clamped: boolean;
  user_id: string;
  sessions: TimelineSession[];
  next_cursor: string | null;
};

export type Compare = 'previous_period' | 'previous_year';
/** What every metrics call of a page shares: its window and what narrows it. */
export type MetricsScope = {
  from: string;
  to: string;
  event?: string | undefined;
  filters: readonly FilterNode[];
  compare?: Compare | undefined;
};

function scopeQuery(scope: MetricsScope): Record<string, unknown> {
  return {
    date_from: scope.from,
    date_to: scope.to,
    ...(scope.event ? { event: scope.event } : {}),
    // Left out when empty, so a page without filters asks exactly what it asked before.
    ...(scope.filters.length > 0 ? { filters: JSON.stringify(scope.filters) } : {}),
    ...(scope.compare ? { compare: scope.compare } : {}),
  };
}

const call = <T>(path: string, projectId: string, query: Record<string, unknown>) =>
  unwrap(get(path, { params: { path: { id: projectId }, query } })) as Promise<T>;

export const metricsSummary = (projectId: string, scope: MetricsScope, measures?: string[]) =>
  call<SummaryAnswer>('/projects/{id}/metrics/summary', projectId, { ...scopeQuery(scope), ...(measures ? { measures } : {}) });

export const metricsTimeseries = (projectId: string, scope: MetricsScope, interval: string, measures: string[]) =>
  call<TimeseriesAnswer>('/projects/{id}/metrics/timeseries', projectId, { ...scopeQuery(scope), interval, measures });

export const metricsBreakdown = (projectId: string, scope: MetricsScope, dimension: string, measures: string[], limit = 20) =>
  call<BreakdownAnswer>('/projects/{id}/metrics/breakdown', projectId, { ...scopeQuery(scope), dimension, measures, limit });

export const eventProperties = (projectId: string, query: { from: string; to: string; event?: string | undefined }) =>
  call<EventPropertiesAnswer>('/projects/{id}/event-properties', projectId, {
    date_from: query.from,
    date_to: query.to,
    ...(query.event ? { event: query.event } : {}),
  });

export const userTimeline = (projectId: string, userId: string, query: { from: string; to: string; cursor?: string | undefined }) =>
  unwrap(
    get('/projects/{id}/users/{userId}/timeline', {
      params: {
        path: { id: projectId, userId },
        query: { date_from: query.from, date_to: query.to, limit: 20, ...(query.cursor ? { cursor: query.cursor } : {}) },
      },
    }),
  ) as Promise<TimelineAnswer>;
