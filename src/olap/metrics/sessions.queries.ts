import type { ClickHouseClient } from '../clickhouse.js';
import type { SqlCondition } from '../filter-types.js';
import { queryRows } from '../query-rows.js';
import { chTime, clickhouseTimeToIso } from '../time.js';
import { type BucketSpec, type NameFilter, type Scope, timeBucket } from './metrics.queries.js';

/**
 * Sessions (docs/sessions.md), formed at query time from `events_by_user`, the events in
 * (project, user, time) order (docs/clickhouse.md, "Sessions: formed at query time"): per user, the
 * in-scope events of the window as one sorted array of times; a gap longer than the timeout starts
 * a new session (arraySplit), so a gap of exactly the timeout does not. Events outside the window
 * are never read, so a session that crosses the window's edge is the part of it inside.
 */
export type SessionScope = Scope & {
  /** The names that form sessions (the plan's event scope); null: every name. */
  names: NameFilter;
  /** The project's session_timeout_minutes, 1 to 1440. */
  timeoutMinutes: number;
  /**
   * Keeps the sessions that hold at least one event it holds for (the request's `event` and
   * `filters`); null keeps every session. It reads the row's event_name, user_id, properties_raw.
   */
  keep: SqlCondition | null;
};

/** What one bucket's sessions add up to; durations in milliseconds. */
export type SessionMeasureRow = {
  bucket: string;
  sessions: number;
  /** Sessions with exactly one event. */
  bounces: number;
  /** Events of the kept sessions (all their events, matching the filters or not). */
  events: number;
  duration_avg_ms: number | null;
  duration_median_ms: number | null;
  duration_p90_ms: number | null;
};

export type KeyedSessionMeasureRow = Omit<SessionMeasureRow, 'bucket'> & { key: string | null };

/** What a session query should compute beyond counts: the quantiles cost a copy of every duration. */
export type SessionWants = { quantiles: boolean };

/** The entry of a session, for a breakdown: its first event's name, or one top-level property of it. */
export type SessionEntry = { kind: 'event' } | { kind: 'property'; key: string };

/**
 * The timeout in milliseconds, checked here because it is the one number of the text that is not a
 * bound parameter's meaning alone: a gap is split on `> timeoutMs`. 1 to 1440 minutes (PostgreSQL
 * checks it too: sql/postgres/018).
 */
function timeoutMs(scope: SessionScope): number {
  const minutes = scope.timeoutMinutes;
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 1440) throw new RangeError('timeoutMinutes: 1 to 1440');
  return minutes * 60_000;
}

function sessionParams(scope: SessionScope): Record<string, unknown> {
  return {
    projectId: scope.projectId,
    start: chTime(scope.start),
    end: chTime(scope.end),
    sessionNames: scope.names ?? [],
    timeoutMs: timeoutMs(scope),
    ...(scope.keep?.params ?? {}),
  };
}

const scopeWhere = (scope: SessionScope) =>
  `project_id = {projectId:UUID}
   AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')}
   ${scope.names === null ? '' : 'AND event_name IN {sessionNames:Array(String)}'}`;

/** Milliseconds since the window's start: at most 366 days, 35 bits. */
const OFFSET = `toUInt64(toUnixTimestamp64Milli(created_at) - toUnixTimestamp64Milli({start:DateTime64(3, 'UTC')}))`;

/**
 * One row per kept session: `started` and `ended` (ms since the window's start), `n` (its events), and
 * with an entry, `entry` (the first event's name or property text). Without an entry, each event
 * is one UInt64, its offset shifted left once with the filter's verdict in the low bit, so a user's
 * events sort as numbers; with one, an (offset, name, properties, verdict) tuple, so of events at
 * the same millisecond the first is the least by name, then by properties text (a fixed choice,
 * docs/sessions.md), and only that first event's properties are parsed.
 */
function sessionRows(scope: SessionScope, entry: SessionEntry | null): string {
  const verdict = scope.keep === null ? '1' : `toUInt64(${scope.keep.sql})`;
  const grouped =
    entry === null
      ? `arraySort(groupArray(bitOr(bitShiftLeft(${OFFSET}, 1), ${verdict}))) AS packed,
         arrayMap(x -> bitShiftRight(x, 1), packed) AS times`
      : `arraySort(groupArray((${OFFSET}, toString(event_name), properties_raw, ${verdict}))) AS packed,
         arrayMap(x -> x.1, packed) AS times`;
  const first = entry === null ? 'bitShiftRight(s[1], 1)' : 's[1].1';
  const last = entry === null ? 'bitShiftRight(s[-1], 1)' : 's[-1].1';
  const kept =
    scope.keep === null ? '' : entry === null ? 'WHERE arrayExists(x -> bitAnd(x, 1) = 1, s)' : 'WHERE arrayExists(x -> x.4 = 1, s)';
  return `
    SELECT ${first} AS started, ${last} AS ended, length(s) AS n${entry === null ? '' : `, ${entryText(entry, 's[1].2', 's[1].3')} AS entry`}
    FROM (
      SELECT ${grouped}
      FROM events_by_user
      WHERE ${scopeWhere(scope)}
      GROUP BY user_key
    )
    ARRAY JOIN arraySplit((x, gap) -> gap > {timeoutMs:UInt64}, packed, arrayDifference(times)) AS s
    ${kept}`;
}

/** The entry's text: the name, or a top-level property as the metrics breakdown reads one (NULL: missing). */
function entryText(entry: SessionEntry, name: string, raw: string): string {
  if (entry.kind === 'event') return name;
  return `if(NOT JSONHas(${raw}, {entryKey:String}), NULL,
             if(JSONType(${raw}, {entryKey:String}) = 'String',
                JSONExtractString(${raw}, {entryKey:String}),
                JSONExtractRaw(${raw}, {entryKey:String})))`;
}

const measureColumns = (wants: SessionWants) => `
  count() AS sessions, countIf(n = 1) AS bounces, sum(n) AS events,
  avg(ended - started) AS duration_avg_ms
  ${
    wants.quantiles
      ? `, quantilesExactInclusive(0.5, 0.9)(ended - started) AS q,
         q[1] AS duration_median_ms, q[2] AS duration_p90_ms`
      : ', NULL AS duration_median_ms, NULL AS duration_p90_ms'
  }`;

/**
 * The session measures per bucket of the session's start (docs/sessions.md): a session counts in
 * the bucket in which its first event is. Buckets without a session are absent.
 */
export async function sessionMeasures(
  client: ClickHouseClient,
  scope: SessionScope,
  bucket: BucketSpec,
  wants: SessionWants,
): Promise<SessionMeasureRow[]> {
  const startedAt = `fromUnixTimestamp64Milli(toInt64(toUnixTimestamp64Milli({start:DateTime64(3, 'UTC')}) + started), 'UTC')`;
  const rows = await queryRows<SessionMeasureRow & { q?: unknown }>(
    client,
    `SELECT toString(${timeBucket(bucket, 'started_at')}) AS bucket, ${measureColumns(wants)}
     FROM (SELECT ${startedAt} AS started_at, started, ended, n FROM (${sessionRows(scope, null)}))
     GROUP BY bucket`,
    sessionParams(scope),
    SESSION_SETTINGS,
  );
  return rows.map(({ q: _q, ...row }) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

/** The session measures per entry: the first event's name, or a top-level property of it (NULL: missing). */
export async function sessionMeasuresByEntry(
  client: ClickHouseClient,
  scope: SessionScope,
  entry: SessionEntry,
  wants: SessionWants,
): Promise<KeyedSessionMeasureRow[]> {
  const rows = await queryRows<KeyedSessionMeasureRow & { q?: unknown }>(
    client,
    `SELECT entry AS key, ${measureColumns(wants)}
     FROM (${sessionRows(scope, entry)})
     GROUP BY key`,
    { ...sessionParams(scope), ...(entry.kind === 'property' ? { entryKey: entry.key } : {}) },
    SESSION_SETTINGS,
  );
  return rows.map(({ q: _q, ...row }) => row);
}

/**
 * A hash GROUP BY user_key, as the insights group events_by_user (USER_ORDER_SETTINGS there, and
 * why: docs/clickhouse.md, "Why hashed and not in order"). Said here so a server default cannot
 * turn the in-order aggregation back on.
 */
const SESSION_SETTINGS = { optimize_aggregation_in_order: 0 } as const;

export type TimelineSessionRow = {
  /** DateTime64 text of the first and last event. */
  started: string;
  ended: string;
  events: number;
};

/**
 * One user's sessions in the window, newest first: at most `limit`, starting before `before`
 * (DateTime64 text, the previous page's last session start) when given. A session's start is
 * unique for a user (two sessions never share an instant), so paging neither repeats nor skips one.
 * Reads the user's rows of events_by_user only: they are a range of its sort key.
 */
export async function userSessions(
  client: ClickHouseClient,
  scope: SessionScope & { userId: string },
  page: { limit: number; before?: string | undefined },
): Promise<TimelineSessionRow[]> {
  return queryRows<TimelineSessionRow>(
    client,
    `SELECT toString(fromUnixTimestamp64Milli(toInt64(s[1]), 'UTC')) AS started,
            toString(fromUnixTimestamp64Milli(toInt64(s[-1]), 'UTC')) AS ended,
            length(s) AS events
     FROM (
       SELECT arraySort(groupArray(toUInt64(toUnixTimestamp64Milli(created_at)))) AS times
       FROM events_by_user
       WHERE ${scopeWhere(scope)} AND user_id = {userId:String}
     )
     ARRAY JOIN arraySplit((x, gap) -> gap > {timeoutMs:UInt64}, times, arrayDifference(times)) AS s
     WHERE length(times) > 0
       ${page.before !== undefined ? "AND s[1] < toUInt64(toUnixTimestamp64Milli({before:DateTime64(3, 'UTC')}))" : ''}
     ORDER BY s[1] DESC
     LIMIT {limit:UInt32}`,
    { ...sessionParams(scope), userId: scope.userId, before: page.before, limit: page.limit },
  );
}

export type TimelineEventRow = {
  id: string;
  event_name: string;
  properties_raw: string;
  /** DateTime64 text. */
  created: string;
  /** Position of the event in its session, from 1, in (time, id) order. */
  position: number;
};

/**
 * The events of some of one user's sessions, each session's first `perSession` (and one more, so
 * the caller knows it was cut), in (time, id) order, from `events` (the table with the event ids).
 * Each session is a time range [started, ended] of the user's in-scope events, so the rows are
 * found by the user's id over those ranges; `events` is sorted by (project, time), and the ranges
 * keep the read to the granules of their instants.
 */
export async function sessionEvents(
  client: ClickHouseClient,
  scope: SessionScope & { userId: string },
  sessions: { started: string; ended: string }[],
  perSession: number,
): Promise<(TimelineEventRow & { session: number })[]> {
  if (sessions.length === 0) return [];
  const ranges = sessions.map((_, i) => `(created_at BETWEEN {from${i}:DateTime64(3, 'UTC')} AND {to${i}:DateTime64(3, 'UTC')})`);
  const which = sessions.map((_, i) => `created_at BETWEEN {from${i}:DateTime64(3, 'UTC')} AND {to${i}:DateTime64(3, 'UTC')}, ${i}`);
  const params: Record<string, unknown> = { ...sessionParams(scope), userId: scope.userId, perSession: perSession + 1 };
  sessions.forEach((s, i) => {
    params[`from${i}`] = s.started;
    params[`to${i}`] = s.ended;
  });
  return queryRows<TimelineEventRow & { session: number }>(
    client,
    `SELECT id, event_name, properties_raw, created, session, position
     FROM (
       SELECT toString(event_id) AS id, toString(event_name) AS event_name, properties_raw, toString(created_at) AS created,
              multiIf(${which.join(', ')}, -1) AS session,
              row_number() OVER (PARTITION BY session ORDER BY created_at, event_id) AS position
       FROM events
       WHERE ${scopeWhere(scope)} AND user_id = {userId:String} AND (${ranges.join(' OR ')})
     )
     WHERE position <= {perSession:UInt32}
     ORDER BY session, position`,
    params,
  );
}
