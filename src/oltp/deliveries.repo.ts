import type { NotificationPayload, NotificationType } from '../notify/payload.js';
import type { Sql, SqlLike } from './db.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DELIVERY_CHANNELS = ['email', 'slack', 'discord', 'webhook'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** A delivery as operators list it. */
export type DeliveryRow = {
  id: string;
  notification_id: string;
  type: NotificationType;
  channel: DeliveryChannel;
  recipient: string;
  integration_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
};

/** Everything one attempt needs: the delivery, its notification, and the integration's target. */
export type ClaimedDelivery = {
  id: string;
  project_id: string;
  project_name: string;
  channel: DeliveryChannel;
  recipient: string;
  attempts: number;
  unsubscribe_token: string | null;
  type: NotificationType;
  payload: NotificationPayload;
  integration: { kind: DeliveryChannel; url: string; secret: string | null; enabled: boolean } | null;
};

/**
 * Claims one pending delivery for an attempt: one conditional update, so of two workers holding
 * the same id exactly one gets it; a delivered or failed row is never claimed. The attempt is
 * counted at claim time, so an attempt cut short by a crash still counts. `leaseMs` bounds how
 * long the claim keeps others off (a dead worker's claim expires).
 */
export async function claimDelivery(sql: SqlLike, id: string, leaseMs: number): Promise<ClaimedDelivery | null> {
  const [row] = await sql<{ id: string }[]>`
    update deliveries set
      attempts = attempts + 1,
      locked_until = now() + ${leaseMs} * interval '1 millisecond',
      updated_at = now()
    where id = ${id}
      and status = 'pending'
      and (locked_until is null or locked_until < now())
    returning id`;
  return row ? loadDelivery(sql, row.id) : null;
}

/**
 * Claims up to `limit` pending deliveries that are due (next_attempt_at reached), oldest due
 * first: the in-process poller's way to find work without a queue.
 */
export async function claimDueDeliveries(sql: SqlLike, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
  const rows = await sql<{ id: string }[]>`
    update deliveries set
      attempts = attempts + 1,
      locked_until = now() + ${leaseMs} * interval '1 millisecond',
      updated_at = now()
    where id in (
      select id from deliveries
      where status = 'pending'
        and next_attempt_at <= now()
        and (locked_until is null or locked_until < now())
      order by next_attempt_at, id
      limit ${limit}
      for update skip locked
    )
    returning id`;
  const claimed = await Promise.all(rows.map((row) => loadDelivery(sql, row.id)));
  return claimed.filter((row): row is ClaimedDelivery => row !== null);
}

async function loadDelivery(sql: SqlLike, id: string): Promise<ClaimedDelivery | null> {
  const [row] = await sql<(Omit<ClaimedDelivery, 'integration'> & {
    i_kind: DeliveryChannel | null;
    i_url: string | null;
    i_secret: string | null;
    i_enabled: boolean | null;
  })[]>`
    select d.id, d.project_id, p.name as project_name, d.channel, d.recipient, d.attempts,
           d.unsubscribe_token, n.type, n.payload,
           i.kind as i_kind, i.url as i_url, i.secret as i_secret, i.enabled as i_enabled
    from deliveries d
    join notifications n on n.id = d.notification_id
    join projects p on p.id = d.project_id
    left join integrations i on i.id = d.integration_id
    where d.id = ${id}`;
  if (!row) return null;
  const { i_kind, i_url, i_secret, i_enabled, ...delivery } = row;
  return {
    ...delivery,
    integration: i_kind && i_url !== null ? { kind: i_kind, url: i_url, secret: i_secret, enabled: i_enabled ?? false } : null,
  };
}

export async function markDelivered(sql: SqlLike, id: string): Promise<void> {
  await sql`
    update deliveries set status = 'delivered', delivered_at = now(), locked_until = null, last_error = null, updated_at = now()
    where id = ${id}`;
}

/**
 * Records a failed attempt: back to pending, due again after `retryInMs` (counted on the
 * database's clock, which the poller compares with), or failed for good when `retryInMs` is null
 * (attempts spent, or a permanent failure).
 */
export async function markAttemptFailed(sql: SqlLike, id: string, error: string, retryInMs: number | null): Promise<void> {
  await sql`
    update deliveries set
      status = ${retryInMs === null ? 'failed' : 'pending'},
      next_attempt_at = ${retryInMs === null ? sql`next_attempt_at` : sql`now() + ${retryInMs} * interval '1 millisecond'`},
      last_error = ${error.slice(0, 1000)},
      locked_until = null,
      updated_at = now()
    where id = ${id}`;
}

/**
 * Pending deliveries whose time has long passed with nobody on them: in queue mode, deliveries
 * whose job was lost (a crash between dispatch and enqueue, a job removed by hand).
 */
export async function overdueDeliveryIds(sql: SqlLike, olderThanMs: number, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from deliveries
    where status = 'pending'
      and next_attempt_at < now() - ${olderThanMs} * interval '1 millisecond'
      and (locked_until is null or locked_until < now())
    order by next_attempt_at
    limit ${limit}`;
  return rows.map((row) => row.id);
}

const listColumns = (sql: SqlLike) => sql`
  d.id, d.notification_id, n.type, d.channel, d.recipient, d.integration_id, d.status, d.attempts,
  d.last_error, d.next_attempt_at, d.delivered_at, d.created_at, d.updated_at`;

/** A project's deliveries, newest first, optionally of one status. */
export async function listDeliveries(
  sql: SqlLike,
  projectId: string,
  filter: { status?: DeliveryStatus | undefined; limit: number; offset: number },
): Promise<DeliveryRow[]> {
  return sql<DeliveryRow[]>`
    select ${listColumns(sql)}
    from deliveries d
    join notifications n on n.id = d.notification_id
    where d.project_id = ${projectId}
      ${filter.status ? sql`and d.status = ${filter.status}` : sql``}
    order by d.created_at desc, d.id desc
    limit ${filter.limit} offset ${filter.offset}`;
}

export type RetryResult = { kind: 'retried'; delivery: DeliveryRow } | { kind: 'not_found' } | { kind: 'not_failed'; status: DeliveryStatus };

/**
 * An operator's retry of a failed delivery: pending again, due now, with a fresh budget of
 * attempts (attempts back to 0; last_error kept until the next attempt replaces it).
 */
export async function retryDelivery(sql: Sql, projectId: string, id: string): Promise<RetryResult> {
  return sql.begin(async (tx) => {
    const [current] = await tx<{ status: DeliveryStatus }[]>`
      select status from deliveries where id = ${id} and project_id = ${projectId} for update`;
    if (!current) return { kind: 'not_found' as const };
    if (current.status !== 'failed') return { kind: 'not_failed' as const, status: current.status };
    await tx`
      update deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = null, updated_at = now()
      where id = ${id}`;
    const [delivery] = await tx<DeliveryRow[]>`
      select ${listColumns(tx)}
      from deliveries d join notifications n on n.id = d.notification_id
      where d.id = ${id}`;
    return { kind: 'retried' as const, delivery: delivery as DeliveryRow };
  });
}
