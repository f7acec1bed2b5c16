import { randomUUID } from 'node:crypto';
import { PLAN_LIMITS, type Plan } from '../core/plans.js';
import type { Sql, SqlLike } from './db.js';
import { digestRecipients } from './digest.repo.js';
import {
  isAlertPayload,
  isChangelogPayload,
  isDigestPayload,
  isFeedbackPayload,
  type Notification,
  type NotificationPayload,
  type NotificationType,
} from './notification-payload.js';

/**
 * Records a notification; call it with the transaction that makes the change (an outbox). A
 * `changelog.published` one names its entry: the unique index of migration 022 refuses a second
 * for the same entry, whatever called.
 */
export async function recordNotification(sql: SqlLike, notification: Notification): Promise<void> {
  const entryId = notification.type === 'changelog.published' ? notification.changelogEntryId : null;
  await sql`
    insert into notifications (project_id, type, payload, changelog_entry_id)
    values (${notification.projectId}, ${notification.type}, ${sql.json(JSON.parse(JSON.stringify(notification.payload)))}, ${entryId})`;
}

type PendingNotification = { id: string; project_id: string; type: NotificationType; payload: NotificationPayload; plan: Plan };

export type Recipient = {
  channel: 'email' | 'slack' | 'discord' | 'webhook' | 'github' | 'linear';
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
      // (about 0.9 KB per feedback item created, forever). A changelog entry's is kept: it is the
      // entry's record of who was told, nobody included (one row per entry).
      await tx`
        delete from notifications n
        where n.id in ${tx(ids)} and n.changelog_entry_id is null
          and not exists (select 1 from deliveries d where d.notification_id = n.id)`;
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
 * notification with a pending delivery is kept whatever its age, and a changelog entry's as long
 * as the entry (its "who was told", and what its emails' unsubscribe links read). At most
 * `limit` rows a call, so a large backlog is deleted in short transactions. Returns how many
 * were deleted.
 */
export async function pruneSettledNotifications(sql: Sql, retentionDays: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from notifications
    where id in (
      select n.id from notifications n
      where n.dispatched_at < now() - make_interval(days => ${retentionDays})
        and n.changelog_entry_id is null
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
  const { payload } = notification;
  // An alert reaches the channels it names, whatever each integration's `events`; the digest its
  // opted-in recipients (docs/notifications.md "Alerts", "The weekly digest").
  if (isAlertPayload(payload)) return alertRecipients(sql, notification.project_id, payload.alert_message.alert.id, notification.plan);
  if (isDigestPayload(payload)) {
    return (await digestRecipients(sql, notification.project_id, notification.plan)).map((r) => ({
      channel: 'email' as const,
      recipient: r.email,
      integration_id: null,
      unsubscribe_token: r.unsubscribe_token,
    }));
  }
  // A vote reaches the trackers of the item's linked issues, and nobody else.
  if (notification.type === 'feedback.votes_changed') {
    return limits.integrations && isFeedbackPayload(payload) ? trackerRecipients(sql, payload.feedback.id, { coalesceVotes: true }) : [];
  }
  if (limits.integrations) {
    const integrations = await sql<{ id: string; kind: Recipient['channel'] }[]>`
      select id, kind from integrations
      where project_id = ${notification.project_id}
        and enabled
        and kind in ('slack', 'discord', 'webhook')
        and (events is null or ${notification.type} = any (events))
      order by created_at, id`;
    for (const i of integrations) recipients.push({ channel: i.kind, recipient: i.id, integration_id: i.id, unsubscribe_token: null });
    // A status change reaches the item's linked issues too: each follows through its map.
    if (notification.type === 'feedback.status_changed' && isFeedbackPayload(payload)) {
      recipients.push(...(await trackerRecipients(sql, payload.feedback.id, { coalesceVotes: false })));
    }
    // A new item reaches the trackers that make an issue for every new item.
    if (notification.type === 'feedback.created' && isFeedbackPayload(payload)) {
      recipients.push(...(await autoCreateRecipients(sql, notification.project_id, payload.feedback.id)));
    }
  }
  if (notification.type === 'feedback.created' && limits.teamMembers) {
    const members = await sql<{ email: string }[]>`
      select lower(email) as email from project_members
      where project_id = ${notification.project_id}
      order by created_at, id`;
    for (const m of members) recipients.push({ channel: 'email', recipient: m.email, integration_id: null, unsubscribe_token: null });
  }
  if (isChangelogPayload(payload)) {
    if (limits.voterNotifications) {
      for (const email of await changelogAudience(
        sql,
        payload.items.map((item) => item.id),
      )) {
        // A token of the delivery's own: its link stops every item this email is about.
        recipients.push({ channel: 'email', recipient: email, integration_id: null, unsubscribe_token: randomUUID() });
      }
    }
    return recipients;
  }
  // A status change published with a changelog entry (complete_linked): its emails are the entry's.
  if (notification.type === 'feedback.status_changed' && limits.voterNotifications && !payload.folded_into_entry) {
    const feedbackId = payload.feedback.id;
    const [submitter] = await sql<{ email: string; token: string }[]>`
      select lower(user_email) as email, submitter_unsubscribe_token as token from feedbacks
      where id = ${feedbackId} and user_email is not null and submitter_notify`;
    if (submitter)
      recipients.push({ channel: 'email', recipient: submitter.email, integration_id: null, unsubscribe_token: submitter.token });
    const audience = payload.audience ?? { votes_of: feedbackId };
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

/**
 * The linked issues of an item in its enabled trackers, one delivery each (recipient: the link's
 * id). With `coalesceVotes`, a link that has a votes update pending gets no second one: the
 * pending one reads the item's votes when it is sent.
 */
async function trackerRecipients(sql: SqlLike, feedbackId: string, options: { coalesceVotes: boolean }): Promise<Recipient[]> {
  const links = await sql<{ id: string; integration_id: string; kind: 'github' | 'linear' }[]>`
    select l.id, l.integration_id, i.kind
    from tracker_links l join integrations i on i.id = l.integration_id
    where l.feedback_id = ${feedbackId}
      and i.enabled
      ${
        options.coalesceVotes
          ? sql`and not exists (
                  select 1 from deliveries d join notifications n on n.id = d.notification_id
                  where d.recipient = l.id::text and d.status = 'pending' and d.channel in ('github', 'linear')
                    and n.type = 'feedback.votes_changed')`
          : sql``
      }
    order by l.created_at, l.id`;
  return links.map((link) => ({ channel: link.kind, recipient: link.id, integration_id: link.integration_id, unsubscribe_token: null }));
}

/**
 * The project's enabled trackers with `auto_create` whose token works, one delivery each for a
 * new item (recipient: the item's id): each makes the item's issue (docs/integrations.md "Out").
 */
async function autoCreateRecipients(sql: SqlLike, projectId: string, feedbackId: string): Promise<Recipient[]> {
  const trackers = await sql<{ id: string; kind: 'github' | 'linear' }[]>`
    select i.id, i.kind
    from integrations i join tracker_settings s on s.integration_id = i.id
    where i.project_id = ${projectId} and i.enabled and s.auto_create and s.needs_attention is null
    order by i.created_at, i.id`;
  return trackers.map((tracker) => ({ channel: tracker.kind, recipient: feedbackId, integration_id: tracker.id, unsubscribe_token: null }));
}

/**
 * Who hears of an alert (docs/notifications.md "Alerts"): the enabled integrations among those it
 * names (Pro and Team), and when its `email` is on, the account owner and, on Team, the project's
 * members. Read when the notification is expanded (and for a test, when it is sent): an alert
 * deleted since tells nobody. None below the plans that have alerts.
 */
export async function alertRecipients(sql: SqlLike, projectId: string, alertId: string, plan: Plan): Promise<Recipient[]> {
  const limits = PLAN_LIMITS[plan];
  if (limits.maxAlertsPerProject === 0) return [];
  const recipients: Recipient[] = [];
  if (limits.integrations) {
    const integrations = await sql<{ id: string; kind: Recipient['channel'] }[]>`
      select i.id, i.kind from alert_integrations ai
      join integrations i on i.id = ai.integration_id
      where ai.alert_id = ${alertId} and i.project_id = ${projectId} and i.enabled
        and i.kind in ('slack', 'discord', 'webhook')
      order by i.created_at, i.id`;
    for (const i of integrations) recipients.push({ channel: i.kind, recipient: i.id, integration_id: i.id, unsubscribe_token: null });
  }
  const emails = await sql<{ email: string }[]>`
    select lower(acc.email) as email from alerts al
    join projects p on p.id = al.project_id
    join accounts acc on acc.id = p.account_id
    where al.id = ${alertId} and al.project_id = ${projectId} and al.email
    union all
    select lower(m.email) from alerts al
    join project_members m on m.project_id = al.project_id
    where al.id = ${alertId} and al.project_id = ${projectId} and al.email and ${limits.teamMembers}`;
  for (const e of emails) recipients.push({ channel: 'email', recipient: e.email, integration_id: null, unsubscribe_token: null });
  return recipients;
}

/**
 * Who hears of a changelog entry by email: every address that gets the status-change emails of
 * one of its linked items (docs/notifications.md "Changelog entries"), the voters who opted in
 * and the submitters who gave an address, once each (lowercased), in a stable order.
 */
async function changelogAudience(sql: SqlLike, itemIds: string[]): Promise<string[]> {
  if (itemIds.length === 0) return [];
  const rows = await sql<{ email: string }[]>`
    select email from (
      select lower(email) as email from votes
      where feedback_id = any(${itemIds}::uuid[]) and notify_status_change and email is not null
      union
      select lower(user_email) from feedbacks
      where id = any(${itemIds}::uuid[]) and user_email is not null and submitter_notify
    ) audience
    order by email`;
  return rows.map((row) => row.email);
}

/**
 * Whose link a token is: the items and the (lowercased) address it was sent to. A status-change
 * email's token is its vote's or its submitter's (one item); a changelog email's is its
 * delivery's own, and names the items the entry linked when it was published, as its
 * announcement holds them (the email was about those the address followed; the link stops them
 * all, whatever the entry links since).
 */
async function linkOwner(sql: SqlLike, token: string): Promise<{ feedback_ids: string[]; email: string } | undefined> {
  const [owner] = await sql<{ feedback_ids: string[]; email: string }[]>`
    select array[feedback_id] as feedback_ids, lower(email) as email from votes where unsubscribe_token = ${token} and email is not null
    union all
    select array[id], lower(user_email) from feedbacks where submitter_unsubscribe_token = ${token} and user_email is not null
    union all
    select array(
             select (x.item ->> 'id')::uuid
             from jsonb_array_elements(n.payload -> 'items') with ordinality as x(item, position)
             order by x.position),
           d.recipient
    from deliveries d join notifications n on n.id = d.notification_id
    where d.unsubscribe_token = ${token} and n.type = 'changelog.published'
    limit 1`;
  return owner;
}

export type UnsubscribeLink = {
  feedback_id: string;
  title: string;
  email: string;
  subscribed: boolean;
  items: { id: string; title: string; subscribed: boolean }[];
};

/**
 * What an unsubscribe link is for, read only: its items (one for a status-change email, the
 * entry's for a changelog email), the address, and whether that address still gets their
 * status-change emails (as a voter or as the submitter). `feedback_id` and `title` are the
 * first item's; `subscribed` is true while any item's emails still go to the address. Null for
 * an unknown token, or a link whose items are all gone.
 */
export async function unsubscribeLink(sql: Sql, token: string): Promise<UnsubscribeLink | null> {
  const owner = await linkOwner(sql, token);
  if (!owner) return null;
  const items = await sql<{ id: string; title: string; subscribed: boolean }[]>`
    select f.id, f.title,
           exists (
             select 1 from votes v
             where v.feedback_id = f.id and lower(v.email) = ${owner.email} and v.notify_status_change
           ) or coalesce(lower(f.user_email) = ${owner.email} and f.submitter_notify, false) as subscribed
    from unnest(${owner.feedback_ids}::uuid[]) with ordinality as x(id, position)
    join feedbacks f on f.id = x.id
    -- The items the address follows or followed: a changelog entry may link others too.
    where exists (select 1 from votes v where v.feedback_id = f.id and lower(v.email) = ${owner.email})
       or lower(f.user_email) = ${owner.email}
    order by x.position`;
  const [first] = items;
  if (!first) return null;
  return { feedback_id: first.id, title: first.title, email: owner.email, subscribed: items.some((item) => item.subscribed), items };
}

/**
 * Unsubscribes from status-change emails: the token of a vote or of the submitter stops them for
 * that address on that item, whichever role put it on the list (a voter who is also the
 * submitter gets one email, with one of the two tokens); a changelog email's token stops them on
 * every item of its entry. Null for an unknown token.
 */
export async function unsubscribe(sql: Sql, token: string): Promise<{ feedback_ids: string[]; email: string } | null> {
  return sql.begin(async (tx) => {
    const owner = await linkOwner(tx, token);
    if (!owner) return null;
    await tx`
      update votes set notify_status_change = false
      where feedback_id = any(${owner.feedback_ids}::uuid[]) and lower(email) = ${owner.email} and notify_status_change`;
    await tx`
      update feedbacks set submitter_notify = false
      where id = any(${owner.feedback_ids}::uuid[]) and lower(user_email) = ${owner.email} and submitter_notify`;
    return owner;
  });
}
