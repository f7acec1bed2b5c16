import { PLAN_LIMITS } from '../../core/plans.js';
import { apiTime } from '../../core/time.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { clickhouseTimeToIso } from '../time.js';
import { PREDEFINED_EVENTS } from './measures.js';
import type { MetricsTarget } from './metrics.planner.js';
import { type SessionScope, sessionEvents, userSessions } from './sessions.queries.js';
import { resolveWindow } from './window.js';

/** A timeline page lists at most this many events of each session (its first ones), then says it was cut. */
export const EVENTS_PER_SESSION = 100;
/** Sessions per page by default, and at most. */
export const TIMELINE_DEFAULT_LIMIT = 20;
export const TIMELINE_MAX_LIMIT = 100;

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;

/** The start (DateTime64 text) of the last session of the previous page, as an opaque string. */
const encodeCursor = (started: string) => Buffer.from(JSON.stringify(['s', started])).toString('base64url');

/** The session start a `next_cursor` names, or undefined for a string this API did not return. */
export function decodeTimelineCursor(value: string): string | undefined {
  try {
    const [tag, started] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (tag === 's' && typeof started === 'string' && CURSOR_TIME.test(started)) return started;
  } catch {
    // not base64url JSON: not one of ours
  }
  return undefined;
}

export type TimelineQuery = {
  date_from?: string | undefined;
  date_to?: string | undefined;
  limit?: number | undefined;
  /** A decoded cursor: the start of the previous page's last session. */
  cursor?: string | undefined;
};

const DEFAULT_SESSION_TIMEOUT_MINUTES = 30;

/**
 * One user's sessions (docs/sessions.md, "The user timeline"), newest first, each with its events
 * in time order (ties by event id), paged by the start of the last session shown. The window is
 * clamped to the plan's allowance as every metrics window is, and formed from the plan's event
 * scope: below Pro only the predefined events form sessions and are listed.
 */
export async function userTimeline(client: ClickHouseClient, target: MetricsTarget, userId: string, query: TimelineQuery) {
  const window = resolveWindow(query, target.plan);
  const scope: SessionScope & { userId: string } = {
    projectId: target.projectId,
    start: window.start,
    end: window.end,
    names: PLAN_LIMITS[target.plan].customEventsReadable ? null : [...PREDEFINED_EVENTS],
    timeoutMinutes: target.sessionTimeoutMinutes ?? DEFAULT_SESSION_TIMEOUT_MINUTES,
    keep: null,
    userId,
  };
  const limit = query.limit ?? TIMELINE_DEFAULT_LIMIT;
  const sessions = await userSessions(client, scope, { limit, before: query.cursor });
  const events = await sessionEvents(client, scope, sessions, EVENTS_PER_SESSION);
  const last = sessions.at(-1);
  return {
    date_from: window.dateFrom,
    date_to: window.dateTo,
    retention_clamped: window.retentionClamped,
    user_id: userId,
    sessions: sessions.map((session, index) => {
      const mine = events.filter((e) => e.session === index).slice(0, EVENTS_PER_SESSION);
      const started = Date.parse(clickhouseTimeToIso(session.started));
      const ended = Date.parse(clickhouseTimeToIso(session.ended));
      return {
        started_at: apiTime(new Date(started)),
        ended_at: apiTime(new Date(ended)),
        duration_seconds: (ended - started) / 1000,
        event_count: Number(session.events),
        events: mine.map((e) => ({
          id: e.id,
          event_name: e.event_name,
          properties: e.properties_raw === '' ? null : (JSON.parse(e.properties_raw) as Record<string, unknown>),
          created_at: apiTime(clickhouseTimeToIso(e.created)),
        })),
        events_truncated: Number(session.events) > mine.length,
      };
    }),
    next_cursor: sessions.length === limit && last ? encodeCursor(last.started) : null,
  };
}
