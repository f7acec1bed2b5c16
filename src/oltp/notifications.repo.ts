import { PLAN_LIMITS, type Plan } from '../core/plans.js';
import type { Sql, SqlLike } from './db.js';
import type { Notification, NotificationPayload, NotificationType } from './notification-payload.js';

/** Records a notification; call it with the transaction that makes the change (an outbox). */
export async function recordNotification(sql: SqlLike, notification: Notification): Promise<void> {
  await sql`
    insert into notifications (project_id, type, payload)
    values (${notification.projectId}, ${notification.type}, ${sql.json(JSON.parse(JSON.stringify(notification.payload)))})`;
}

type PendingNotification = { id: string; project_id: string; type: NotificationType; payload: NotificationPayload; plan: Plan };

type Recipient = {
  channel: 'email' | 'slack' | 'discord' | 'webhook';
  recipient: string;
  integration_id: string | null;
  unsubscribe_token: string | null;
};

/**
 * Expands up to `limit` undispatched notifications into one `deliveries` row per recipient and
 * marks them dispatched, in one transaction: a notification is expanded exactly once, and
 * `for update skip locked` lets several dispatchers work side by side. The plan is read here,
 * at expansion (SPEC 8.2): integrations on Pro and Team, member, voter and submitter emails on
 * Team. Returns the ids of the deliveries created.
 */
export async function dispatchNotifications(sql: Sql, limit: number): Promise<{ notifications: number; deliveryIds: string[] }> {
  return sql.begin(async (tx) => {
    const pending = await tx<PendingNotification[]>`
      select n.id, n.project_id, n.type, n.payload, a.plan
      from notifications n
      join projects p on p.id = n.project_id
      join accounts a on a.id = p.account_id
      where n.dispatched_at is null
      order by n.id
      limit ${limit}
      for update of n skip locked`;
    const deliveryIds: string[] = [];
    for (const notification of pending) {
      const recipients = await recipientsOf(tx, notification);
      for (const r of recipients) {
        // A second entry for the same address (a voter who is also the submitter) is dropped by
        // the unique key: one message per recipient.
        const [row] = await tx<{ id: string }[]>`
          insert into deliveries (notification_id, project_id, channel, recipient, integration_id, unsubscribe_token)
          values (${notification.id}, ${notification.project_id}, ${r.channel}, ${r.recipient}, ${r.integration_id}, ${r.unsubscribe_token})
          on conflict (notification_id, channel, recipient) do nothing
          returning id`;
        if (row) deliveryIds.push(row.id);
      }
    }
    if (pending.length > 0) {
      const ids = pending.map((n) => n.id);
      // A notification nobody is to hear of (no integration, member or opted-in voter on the
      // plan) has done its work: it is deleted now rather than kept as a dispatched row
      // (about 0.9 KB per feedback item created, forever).
      await tx`
        delete from notifications n
        where n.id in ${tx(ids)} and not exists (select 1 from deliveries d where d.notification_id = n.id)`;
      await tx`update notifications set dispatched_at = now() where id in ${tx(ids)}`;
    }
    return { notifications: pending.length, deliveryIds };
  });
}

/**
 * The retention rule of the notification outbox (docs/notifications.md): a dispatched
 * notification whose deliveries have all settled (delivered or failed) is deleted once it was
 * dispatched more than `retentionDays` ago, with its deliveries (on delete cascade): they are the
 * owner's delivery history until then (GET /projects/:id/deliveries, retrying a failed one). A
 * notification with a pending delivery is kept whatever its age. At most `limit` rows a call, so
 * a large backlog is deleted in short transactions. Returns how many were deleted.
 */
export async function pruneSettledNotifications(sql: Sql, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from notifications
    where id in (
      select n.id from notifications n
      where n.dispatched_at < now() - make_interval(days => ${retentionDays})
        and not exists (select 1 from deliveries d where d.notification_id = n.id and d.status = 'pending')
      order by n.id
      limit ${limit}
      for update skip locked
    )`;
  return deleted.count;
}

async function recipientsOf(sql: SqlLike, notification: PendingNotification): Promise<Recipient[]> {
  const limits = PLAN_LIMITS[notification.plan];
  const recipients: Recipient[] = [];
  if (limits.integrations) {
    const integrations = await sql<{ id: string; kind: Recipient['channel'] }[]>`
      select id, kind from integrations
      where project_id = ${notification.project_id}
        and enabled
        and (events is null or ${notification.type} = any (events))
      order by created_at, id`;
    for (const i of integrations) recipients.push({ channel: i.kind, recipient: i.id, integration_id: i.id, unsubscribe_token: null });
  }
  if (notification.type === 'feedback.created' && limits.teamMembers) {
    const members = await sql<{ email: string }[]>`
      select lower(email) as email from project_members
      where project_id = ${notification.project_id}
      order by created_at, id`;
    for (const m of members) recipients.push({ channel: 'email', recipient: m.email, integration_id: null, unsubscribe_token: null });
  }
  if (notification.type === 'feedback.status_changed' && limits.voterNotifications) {
    const feedbackId = notification.payload.feedback.id;
    const [submitter] = await sql<{ email: string; token: string }[]>`
      select lower(user_email) as email, submitter_unsubscribe_token as token from feedbacks
      where id = ${feedbackId} and user_email is not null and submitter_notify`;
    if (submitter)
      recipients.push({ channel: 'email', recipient: submitter.email, integration_id: null, unsubscribe_token: submitter.token });
    const audience = notification.payload.audience ?? { votes_of: feedbackId };
    const voters = await sql<{ email: string; token: string }[]>`
      select lower(email) as email, unsubscribe_token as token from votes
      where feedback_id = ${audience.votes_of}
        and notify_status_change
        and email is not null
        ${audience.user_ids ? sql`and user_id = any (${audience.user_ids})` : sql``}
      order by created_at, user_id`;
    for (const v of voters) recipients.push({ channel: 'email', recipient: v.email, integration_id: null, unsubscribe_token: v.token });
  }
  return recipients;
}

/** Whose link a token is: the item and the (lowercased) address it was sent to. */
async function linkOwner(sql: SqlLike, token: string): Promise<{ feedback_id: string; email: string } | undefined> {
  const [owner] = await sql<{ feedback_id: string; email: string }[]>`
    select feedback_id, lower(email) as email from votes where unsubscribe_token = ${token} and email is not null
    union all
    select id, lower(user_email) from feedbacks where submitter_unsubscribe_token = ${token} and user_email is not null
    limit 1`;
  return owner;
}

export type UnsubscribeLink = { feedback_id: string; title: string; email: string; subscribed: boolean };

/**
 * What an unsubscribe link is for, read only: the item, the address, and whether that address
 * still gets the item's status-change emails (as a voter or as the submitter). Null for an
 * unknown token.
 */
export async function unsubscribeLink(sql: Sql, token: string): Promise<UnsubscribeLink | null> {
  const owner = await linkOwner(sql, token);
  if (!owner) return null;
  const [link] = await sql<UnsubscribeLink[]>`
    select f.id as feedback_id, f.title, ${owner.email}::text as email,
           exists (
             select 1 from votes v
             where v.feedback_id = f.id and lower(v.email) = ${owner.email} and v.notify_status_change
           ) or coalesce(lower(f.user_email) = ${owner.email} and f.submitter_notify, false) as subscribed
    from feedbacks f
    where f.id = ${owner.feedback_id}`;
  return link ?? null;
}

/**
 * Unsubscribes from status-change emails of one item: the token of a vote or of the submitter
 * stops them for that address on that item, whichever role put it on the list (a voter who is
 * also the submitter gets one email, with one of the two tokens). Null for an unknown token.
 */
export async function unsubscribe(sql: Sql, token: string): Promise<{ feedback_id: string; email: string } | null> {
  return sql.begin(async (tx) => {
    const owner = await linkOwner(tx, token);
    if (!owner) return null;
    await tx`
      update votes set notify_status_change = false
      where feedback_id = ${owner.feedback_id} and lower(email) = ${owner.email} and notify_status_change`;
    await tx`
      update feedbacks set submitter_notify = false
      where id = ${owner.feedback_id} and lower(user_email) = ${owner.email} and submitter_notify`;
    return owner;
  });
}
