import { apiTime } from '../../core/time.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { clickhouseTimeToIso } from '../time.js';
import { MetricsError } from './metrics.errors.js';
import * as q from './metrics.queries.js';
import { type CommonQuery, customEventsReadable, type MetricsTarget, prepare, requirePro } from './metrics.request.js';

/** `measures` is the raw parameter, only to refuse it (the feed has none). */
export type FeedQuery = Omit<CommonQuery, 'measures'> & {
  measures?: string | undefined;
  limit?: number | undefined;
  cursor?: Cursor | undefined;
  user_id?: string | undefined;
};

export type Cursor = { createdAt: string; eventId: string };
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const encodeCursor = (cursor: Cursor) => Buffer.from(JSON.stringify([cursor.createdAt, cursor.eventId])).toString('base64url');

/** The position a `next_cursor` names, or undefined for a string this API did not return. */
export function decodeCursor(value: string): Cursor | undefined {
  try {
    const [createdAt, eventId] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof eventId === 'string' && CURSOR_TIME.test(createdAt) && UUID.test(eventId)) {
      return { createdAt, eventId };
    }
  } catch {
    // not base64url JSON: not one of ours
  }
  return undefined;
}

/** The raw event feed (Pro and Team): newest first, paged by an opaque cursor. */
export async function eventsFeed(client: ClickHouseClient, target: MetricsTarget, query: FeedQuery) {
  if (!customEventsReadable(target.plan)) requirePro('the raw event feed');
  if (query.measures !== undefined) {
    throw new MetricsError('METRICS_INVALID_PARAMETER', 'the events feed takes no measures');
  }
  // `measures` is undefined here (refused above). The parameters are read in the order they are
  // checked: the route validates each when it is first read.
  const p = prepare(target, query as CommonQuery, []);
  const limit = query.limit ?? 100;
  const after = query.cursor;
  const userId = query.user_id;
  const rows = await q.eventFeed(client, p.scope, { event: query.event, userId, after }, limit);
  const last = rows.at(-1);
  return {
    ...p.echo,
    events: rows.map((row) => ({
      id: row.id,
      event_name: row.event_name,
      user_id: row.user_id,
      properties: row.properties_raw === '' ? null : (JSON.parse(row.properties_raw) as Record<string, unknown>),
      created_at: apiTime(clickhouseTimeToIso(row.created)),
    })),
    next_cursor: rows.length === limit && last ? encodeCursor({ createdAt: last.created, eventId: last.id }) : null,
  };
}
