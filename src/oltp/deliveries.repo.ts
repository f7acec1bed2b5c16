import { PLAN_LIMITS, type Plan } from '../core/plans.js';
import type { Sql, SqlLike } from './db.js';
import type { NotificationPayload, NotificationType } from './notification-payload.js';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
/** `github` and `linear`: an item's linked issue following its status or votes (docs/integrations.md); the recipient is the link's id. */
export const DELIVERY_CHANNELS = ['email', 'slack', 'discord', 'webhook', 'github', 'linear'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

/** A delivery as operators list it. */
export type DeliveryRow = {
  id: string;
  notification_id: string;
  type: NotificationType;
  channel: DeliveryChannel;
  recipient: string;
  integration_id: string | null;
  /** The item the notification is about, as it was then (its snapshot in the notification). */
  feedback_id: string | null;
  feedback_title: string | null;
  /** A changelog.published delivery: the entry, and its title as announced. */
  changelog_entry_id: string | null;
  changelog_entry_title: string | null;
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
  /** Token of this claim: the outcome is recorded only while the row still carries it. */
  claim_token: string;
  project_id: string;
  project_name: string;
  channel: DeliveryChannel;
  recipient: string;
  attempts: number;
  unsubscribe_token: string | null;
  type: NotificationType;
  payload: NotificationPayload;
  integration: { id: string; kind: DeliveryChannel; url: string; secret: string | null; enabled: boolean } | null;
  /**
   * A changelog email: the ids of the entry's items whose status emails the address still gets,
   * in the entry's order (the email names those: "you asked for"); null for any other delivery.
   */
  followed_item_ids: string[] | null;
  /** The project's public board (its slug), for links to the changelog page; null when not public. */
  board_slug: string | null;
  /**
   * Why this delivery may no longer be sent, checked when it is claimed: the plan was downgraded,
   * the member removed, the voter or submitter unsubscribed since the notification was expanded.
   * Null when it may be sent.
   */
  refusal: string | null;
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
      claim_token = gen_random_uuid(),
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
      claim_token = gen_random_uuid(),
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

type LoadedRow = Omit<ClaimedDelivery, 'integration' | 'refusal' | 'claim_token' | 'followed_item_ids'> & {
  followed_item_ids: string[] | null;
  claim_token: string | null;
  plan: Plan;
  i_id: string | null;
  i_kind: DeliveryChannel | null;
  i_url: string | null;
  i_secret: string | null;
  i_enabled: boolean | null;
  is_member: boolean;
  /** The account owner's address (alert emails go to the owner on every plan that has alerts). */
  is_owner: boolean;
  opted_in: boolean;
  /** A digest email: whose subscription its token is, while it is on (null: unsubscribed, or gone with its member). */
  digest_recipient: 'owner' | 'member' | null;
};

/**
 * Loads a claimed delivery with what its attempt needs, and, in the same query, what decides
 * whether it may still be sent: the account's plan, the membership of a member's address, the
 * opt-in behind a voter's or submitter's unsubscribe token. Expansion checked these once
 * (notifications.repo.ts); a downgrade, a removal or an unsubscribe since then must stop it.
 */
async function loadDelivery(sql: SqlLike, id: string): Promise<ClaimedDelivery | null> {
  const [row] = await sql<LoadedRow[]>`
    select d.id, d.claim_token, d.project_id, p.name as project_name, d.channel, d.recipient, d.attempts,
           d.unsubscribe_token, n.type, n.payload, a.plan,
           i.id as i_id, i.kind as i_kind, i.url as i_url, i.secret as i_secret, i.enabled as i_enabled,
           d.channel = 'email' and d.unsubscribe_token is null and exists (
             select 1 from project_members m where m.project_id = d.project_id and lower(m.email) = d.recipient
           ) as is_member,
           d.channel = 'email' and lower(a.email) = d.recipient as is_owner,
           case when n.type = 'digest.weekly' then (
             select case when s.member_id is null then 'owner' else 'member' end
             from digest_subscriptions s where s.unsubscribe_token = d.unsubscribe_token and s.enabled
           ) end as digest_recipient,
           d.unsubscribe_token is not null and (
             exists (select 1 from votes v where v.unsubscribe_token = d.unsubscribe_token and v.notify_status_change)
             or exists (select 1 from feedbacks f where f.submitter_unsubscribe_token = d.unsubscribe_token and f.submitter_notify)
           ) as opted_in,
           case when n.type = 'changelog.published' and d.channel = 'email' then array(
             select x.item ->> 'id'
             from jsonb_array_elements(n.payload -> 'items') with ordinality as x(item, position)
             where exists (
                     select 1 from votes v
                     where v.feedback_id = (x.item ->> 'id')::uuid and lower(v.email) = d.recipient and v.notify_status_change)
                or exists (
                     select 1 from feedbacks f
                     where f.id = (x.item ->> 'id')::uuid and lower(f.user_email) = d.recipient and f.submitter_notify)
             order by x.position
           ) end as followed_item_ids,
           case when p.board_public then p.slug end as board_slug
    from deliveries d
    join notifications n on n.id = d.notification_id
    join projects p on p.id = d.project_id
    join accounts a on a.id = p.account_id
    left join integrations i on i.id = d.integration_id
    where d.id = ${id}`;
  if (!row || row.claim_token === null) return null;
  const { i_id, i_kind, i_url, i_secret, i_enabled, plan, is_member, is_owner, opted_in, digest_recipient, claim_token, ...delivery } = row;
  return {
    ...delivery,
    claim_token,
    followed_item_ids: row.followed_item_ids,
    integration:
      i_id && i_kind && i_url !== null ? { id: i_id, kind: i_kind, url: i_url, secret: i_secret, enabled: i_enabled ?? false } : null,
    refusal: refusalOf(row),
  };
}

/** Why a delivery may no longer be sent (SPEC 8.2 and the opt-ins), or null. */
function refusalOf(row: LoadedRow): string | null {
  const limits = PLAN_LIMITS[row.plan];
  if (row.type === 'alert.firing' || row.type === 'alert.resolved' || row.type === 'alert.test') return alertRefusal(row);
  if (row.type === 'digest.weekly') {
    if (row.digest_recipient === null) return 'unsubscribed';
    return row.digest_recipient === 'owner' || limits.teamMembers ? null : 'the plan no longer includes team member emails';
  }
  if (row.channel !== 'email') return limits.integrations ? null : 'the plan no longer includes integrations';
  if (row.unsubscribe_token === null) {
    if (!limits.teamMembers) return 'the plan no longer includes team member emails';
    return row.is_member ? null : 'no longer a member of the project';
  }
  if (!limits.voterNotifications) return 'the plan no longer includes voter and submitter emails';
  // A changelog email goes while the address still follows one of the entry's items.
  if (row.followed_item_ids) return row.followed_item_ids.length > 0 ? null : 'unsubscribed';
  return row.opted_in ? null : 'unsubscribed';
}

/**
 * An alert's delivery: the plan must still have alerts; an integration needs Pro or Team; the
 * owner's email goes on every such plan, a member's on Team while it is a member.
 */
function alertRefusal(row: LoadedRow): string | null {
  const limits = PLAN_LIMITS[row.plan];
  if (limits.maxAlertsPerProject === 0) return 'the plan no longer includes alerts';
  if (row.channel !== 'email') return limits.integrations ? null : 'the plan no longer includes integrations';
  if (row.is_owner) return null;
  if (!limits.teamMembers) return 'the plan no longer includes team member emails';
  return row.is_member ? null : 'no longer a member of the project';
}

/**
 * Whether the plan still includes a channel for a notification type: what an operator's retry
 * checks (SPEC 8.2). Alerts need a plan with alerts (their emails go to the owner there); the
 * digest's email is on every plan (its recipients are checked when it is sent).
 */
export function planIncludes(plan: Plan, channel: DeliveryChannel, type?: NotificationType): boolean {
  const limits = PLAN_LIMITS[plan];
  if (type === 'digest.weekly') return true;
  if (type === 'alert.firing' || type === 'alert.resolved' || type === 'alert.test') {
    return limits.maxAlertsPerProject > 0 && (channel === 'email' || limits.integrations);
  }
  return channel === 'email' ? limits.teamMembers && limits.voterNotifications : limits.integrations;
}

/**
 * Records a delivered attempt, only while `delivery`'s claim still holds the row (still pending,
 * same claim token); false when the claim was lost (its lease expired and another worker claimed
 * the row), and then nothing is written.
 */
export async function markDelivered(sql: SqlLike, delivery: { id: string; claim_token: string }): Promise<boolean> {
  const rows = await sql`
    update deliveries set
      status = 'delivered', delivered_at = now(), locked_until = null, claim_token = null, last_error = null, updated_at = now()
    where id = ${delivery.id} and claim_token = ${delivery.claim_token} and status = 'pending'
    returning id`;
  return rows.length === 1;
}

/**
 * Records a failed attempt: back to pending, due again after `retryInMs` (counted on the
 * database's clock, which the poller compares with), or failed for good when `retryInMs` is null
 * (attempts spent, or a permanent failure). Conditional on the claim, like markDelivered.
 */
export async function markAttemptFailed(
  sql: SqlLike,
  delivery: { id: string; claim_token: string },
  error: string,
  retryInMs: number | null,
): Promise<boolean> {
  const rows = await sql`
    update deliveries set
      status = ${retryInMs === null ? 'failed' : 'pending'},
      next_attempt_at = ${retryInMs === null ? sql`next_attempt_at` : sql`now() + ${retryInMs} * interval '1 millisecond'`},
      last_error = ${error.slice(0, 1000)},
      locked_until = null,
      claim_token = null,
      updated_at = now()
    where id = ${delivery.id} and claim_token = ${delivery.claim_token} and status = 'pending'
    returning id`;
  return rows.length === 1;
}

/**
 * Puts an attempt off without counting it (a tracker's votes update within a minute of the last
 * one): the claim's attempt is given back, the delivery stays pending until `delayMs` from now,
 * and `reason` says why in the delivery log. Written only while the claim holds the row.
 */
export async function markDeferred(
  sql: SqlLike,
  delivery: { id: string; claim_token: string },
  reason: string,
  delayMs: number,
): Promise<boolean> {
  const rows = await sql`
    update deliveries set
      attempts = greatest(attempts - 1, 0),
      next_attempt_at = now() + ${delayMs} * interval '1 millisecond',
      last_error = ${reason.slice(0, 1000)},
      locked_until = null,
      claim_token = null,
      updated_at = now()
    where id = ${delivery.id} and claim_token = ${delivery.claim_token} and status = 'pending'
    returning id`;
  return rows.length === 1;
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
  d.id, d.notification_id, n.type, d.channel, d.recipient, d.integration_id,
  n.payload -> 'feedback' ->> 'id' as feedback_id, n.payload -> 'feedback' ->> 'title' as feedback_title,
  n.changelog_entry_id, n.payload -> 'entry' ->> 'title' as changelog_entry_title,
  d.status, d.attempts, d.last_error, d.next_attempt_at, d.delivered_at, d.created_at, d.updated_at`;

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

/** One delivery of the project, as listed; null when it is not the project's. */
export async function findDelivery(sql: SqlLike, projectId: string, id: string): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`
    select ${listColumns(sql)}
    from deliveries d
    join notifications n on n.id = d.notification_id
    where d.id = ${id} and d.project_id = ${projectId}`;
  return row ?? null;
}

export type RetryResult =
  | { kind: 'retried'; delivery: DeliveryRow }
  | { kind: 'not_found' }
  | { kind: 'not_failed'; status: DeliveryStatus }
  | { kind: 'not_in_plan'; channel: DeliveryChannel; plan: Plan };

/**
 * An operator's retry of a failed delivery: pending again, due now, with a fresh budget of
 * attempts (attempts back to 0; last_error kept until the next attempt replaces it). Refused
 * when the account's plan no longer includes the delivery's channel.
 */
export async function retryDelivery(sql: Sql, projectId: string, id: string): Promise<RetryResult> {
  return sql.begin(async (tx) => {
    const [current] = await tx<{ status: DeliveryStatus; channel: DeliveryChannel; plan: Plan; type: NotificationType }[]>`
      select d.status, d.channel, a.plan, n.type
      from deliveries d
      join notifications n on n.id = d.notification_id
      join projects p on p.id = d.project_id
      join accounts a on a.id = p.account_id
      where d.id = ${id} and d.project_id = ${projectId}
      for update of d`;
    if (!current) return { kind: 'not_found' as const };
    if (current.status !== 'failed') return { kind: 'not_failed' as const, status: current.status };
    if (!planIncludes(current.plan, current.channel, current.type))
      return { kind: 'not_in_plan' as const, channel: current.channel, plan: current.plan };
    await tx`
      update deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = null, claim_token = null, updated_at = now()
      where id = ${id}`;
    const [delivery] = await tx<DeliveryRow[]>`
      select ${listColumns(tx)}
      from deliveries d join notifications n on n.id = d.notification_id
      where d.id = ${id}`;
    return { kind: 'retried' as const, delivery: delivery as DeliveryRow };
  });
}

/** Counts of a set of deliveries by status. */
export type DeliveryCounts = { sent: number; pending: number; failed: number };

export type ChangelogDeliveries = {
  /** none: no announcement (not published yet); waiting: recorded, not yet expanded by a worker; dispatched: expanded. */
  notification: 'none' | 'waiting' | 'dispatched';
  dispatched_at: Date | null;
  emails: DeliveryCounts;
  integrations: DeliveryCounts;
};

/**
 * Who was told of a changelog entry: its notification's state and its deliveries counted by
 * channel and status, from the delivery log (the entry's notification is kept as long as the
 * entry: notifications.repo.ts). Null when the entry is not the project's.
 */
export async function changelogDeliveries(sql: SqlLike, projectId: string, entryId: string): Promise<ChangelogDeliveries | null> {
  const [row] = await sql<
    {
      found: boolean;
      dispatched_at: Date | null;
      recorded: boolean;
      counts: { channel: DeliveryChannel; status: DeliveryStatus; n: number }[];
    }[]
  >`
    select true as found, n.dispatched_at, n.id is not null as recorded,
           coalesce((
             select json_agg(json_build_object('channel', c.channel, 'status', c.status, 'n', c.n))
             from (select d.channel, d.status, count(*)::int as n from deliveries d where d.notification_id = n.id group by 1, 2) c
           ), '[]'::json) as counts
    from changelog_entries e
    left join notifications n on n.changelog_entry_id = e.id
    where e.id = ${entryId} and e.project_id = ${projectId}`;
  if (!row) return null;
  const emails: DeliveryCounts = { sent: 0, pending: 0, failed: 0 };
  const integrations: DeliveryCounts = { sent: 0, pending: 0, failed: 0 };
  for (const count of row.counts) {
    const into = count.channel === 'email' ? emails : integrations;
    into[count.status === 'delivered' ? 'sent' : count.status] += count.n;
  }
  const notification = !row.recorded ? 'none' : row.dispatched_at ? 'dispatched' : 'waiting';
  return { notification, dispatched_at: row.dispatched_at, emails, integrations };
}
