import type { ClickHouseClient } from '../clickhouse.js';
import { filterCondition } from '../filter-sql.js';
import type { SqlCondition } from '../filter-types.js';
import { isSessionMeasure, type Measure, type MeasureValues, PREDEFINED_EVENTS, type SessionMeasure } from './measures.js';
import type * as q from './metrics.queries.js';
import { type CommonQuery, customEventsReadable, type MetricsTarget, type ResolvedQuery } from './metrics.request.js';
import {
  type SessionEntry,
  type SessionMeasureRow,
  type SessionScope,
  sessionMeasures,
  sessionMeasuresByEntry,
} from './sessions.queries.js';

/* The session measures of a metrics request (docs/sessions.md): per bucket, and per session entry for a breakdown. */

/** sql/postgres/018_session_timeout.sql's default. */
const DEFAULT_SESSION_TIMEOUT_MINUTES = 30;

/**
 * What the session queries read (docs/sessions.md): the window, the plan's event scope (below Pro
 * only the predefined events form sessions), the project's timeout, and what keeps a session: one
 * event named `event`, when the request names one, and one event matching the filters.
 */
function sessionScope(target: MetricsTarget, query: CommonQuery, p: ResolvedQuery): SessionScope {
  const keep: SqlCondition[] = [];
  if (query.event !== undefined) keep.push({ sql: 'event_name = {sessionEvent:String}', params: { sessionEvent: query.event } });
  if (p.filters.length > 0) keep.push(filterCondition(p.filters, { properties: 'raw', prefix: 'sessionFilter' }));
  return {
    ...p.scope,
    names: customEventsReadable(target.plan) ? null : [...PREDEFINED_EVENTS],
    timeoutMinutes: target.sessionTimeoutMinutes ?? DEFAULT_SESSION_TIMEOUT_MINUTES,
    keep:
      keep.length === 0
        ? null
        : { sql: keep.map((c) => `(${c.sql})`).join(' AND '), params: Object.assign({}, ...keep.map((c) => c.params)) },
  };
}

const wantsQuantiles = (measures: readonly Measure[]) =>
  measures.includes('session_duration_median') || measures.includes('session_duration_p90');

/** The requested session measures of one set of sessions: durations in seconds; ratios and durations null without sessions. */
function sessionValues(row: Omit<SessionMeasureRow, 'bucket'> | undefined, measures: readonly Measure[]): MeasureValues {
  const sessions = Number(row?.sessions ?? 0);
  const ratio = (part: number) => (sessions === 0 ? null : part / sessions);
  // Rounded to the microsecond: the interpolated quantiles' float noise (1439.9999999999998) goes.
  const seconds = (ms: number | null | undefined) =>
    sessions === 0 || ms === null || ms === undefined ? null : Math.round(Number(ms) * 1000) / 1e6;
  const all: Record<SessionMeasure, number | null> = {
    sessions,
    session_duration_avg: seconds(row?.duration_avg_ms),
    session_duration_median: seconds(row?.duration_median_ms),
    session_duration_p90: seconds(row?.duration_p90_ms),
    bounce_rate: ratio(Number(row?.bounces ?? 0)),
    events_per_session: ratio(Number(row?.events ?? 0)),
  };
  return Object.fromEntries(measures.filter(isSessionMeasure).map((m) => [m, all[m]])) as MeasureValues;
}

/** The session measures for each bucket start in `starts` (a session counts in the bucket it starts in). */
export async function sessionBuckets(
  client: ClickHouseClient,
  target: MetricsTarget,
  query: CommonQuery,
  p: ResolvedQuery,
  bucket: q.BucketSpec,
  starts: string[],
): Promise<Map<string, MeasureValues>> {
  const result = new Map<string, MeasureValues>();
  if (!p.measures.some(isSessionMeasure)) return result;
  const rows = await sessionMeasures(client, sessionScope(target, query, p), bucket, { quantiles: wantsQuantiles(p.measures) });
  const byBucket = new Map(rows.map((row) => [row.bucket, row]));
  for (const start of starts) result.set(start, sessionValues(byBucket.get(start), p.measures));
  return result;
}

/** A breakdown of session measures by the session's entry: `entry_event` or `entry.property.<key>`. */
export function sessionEntryOf(dimension: string): SessionEntry | undefined {
  if (dimension === 'entry_event') return { kind: 'event' };
  if (dimension.startsWith('entry.property.')) return { kind: 'property', key: dimension.slice('entry.property.'.length) };
  return undefined;
}

export async function sessionBreakdownRows(
  client: ClickHouseClient,
  target: MetricsTarget,
  query: CommonQuery,
  p: ResolvedQuery,
  entry: SessionEntry,
): Promise<{ key: string | null; values: Record<string, number | null> }[]> {
  const rows = await sessionMeasuresByEntry(client, sessionScope(target, query, p), entry, { quantiles: wantsQuantiles(p.measures) });
  return rows.map(({ key, ...row }) => ({ key, values: sessionValues(row, p.measures) as Record<string, number | null> }));
}
