import { DIGEST_TOP, type DigestContent, type DigestFiredAlert, type DigestItem } from '../core/digest.js';
import type { Plan } from '../core/plans.js';
import { apiTime } from '../core/time.js';
import type { SqlLike } from './db.js';

/** A recipient's own digest setting: the owner's is on until turned off, a member's off until turned on. */
export type DigestSetting = { enabled: boolean; email: string; role: 'owner' | 'member' };

/** The owner (memberId null) or a member of the project: its setting, with the address the digest goes to. */
export async function digestSetting(sql: SqlLike, projectId: string, memberId: string | null): Promise<DigestSetting | null> {
  const [row] = await sql<DigestSetting[]>`
    select coalesce(s.enabled, ${memberId === null}) as enabled,
           ${memberId === null ? sql`a.email` : sql`m.email`} as email,
           ${memberId === null ? 'owner' : 'member'}::text as role
    from projects p
    join accounts a on a.id = p.account_id
    ${memberId === null ? sql`` : sql`join project_members m on m.project_id = p.id and m.id = ${memberId}`}
    left join digest_subscriptions s
      on s.project_id = p.id and coalesce(s.member_id, '00000000-0000-0000-0000-000000000000') = coalesce(${memberId}::uuid, '00000000-0000-0000-0000-000000000000')
    where p.id = ${projectId}`;
  return row ?? null;
}

/** Turns the digest on or off for one recipient of the project (the owner: memberId null). */
export async function setDigestSetting(sql: SqlLike, projectId: string, memberId: string | null, enabled: boolean): Promise<void> {
  await sql`
    insert into digest_subscriptions (project_id, member_id, enabled)
    values (${projectId}, ${memberId}, ${enabled})
    on conflict (project_id, coalesce(member_id, '00000000-0000-0000-0000-000000000000'))
    do update set enabled = excluded.enabled, updated_at = now()`;
}

/** One digest email's recipient: the address, and the token of its one-click unsubscribe link. */
export type DigestRecipient = { email: string; member_id: string | null; unsubscribe_token: string };

/**
 * Who gets the project's digest now: the owner unless it turned it off, and on Team the members
 * who turned it on. The owner's row is written on first use, so its link has a token.
 */
export async function digestRecipients(sql: SqlLike, projectId: string, plan: Plan): Promise<DigestRecipient[]> {
  await sql`
    insert into digest_subscriptions (project_id, member_id, enabled) values (${projectId}, null, true)
    on conflict (project_id, coalesce(member_id, '00000000-0000-0000-0000-000000000000')) do nothing`;
  return sql<DigestRecipient[]>`
    select lower(a.email) as email, null::uuid as member_id, s.unsubscribe_token
    from digest_subscriptions s
    join projects p on p.id = s.project_id
    join accounts a on a.id = p.account_id
    where s.project_id = ${projectId} and s.member_id is null and s.enabled
    union all
    select lower(m.email), m.id, s.unsubscribe_token
    from digest_subscriptions s
    join project_members m on m.id = s.member_id
    where s.project_id = ${projectId} and s.enabled and ${plan === 'team'}
    order by member_id nulls first`;
}

/** What a digest unsubscribe token is for; null for a token that is no digest's. */
export type DigestLink = { project_id: string; project_name: string; email: string; subscribed: boolean };

export async function digestLink(sql: SqlLike, token: string): Promise<DigestLink | null> {
  const [row] = await sql<DigestLink[]>`
    select s.project_id, p.name as project_name, lower(coalesce(m.email, a.email)) as email, s.enabled as subscribed
    from digest_subscriptions s
    join projects p on p.id = s.project_id
    join accounts a on a.id = p.account_id
    left join project_members m on m.id = s.member_id
    where s.unsubscribe_token = ${token}`;
  return row ?? null;
}

/** The one-click unsubscribe of a digest email: that recipient's digest of that project stops. */
export async function unsubscribeDigest(sql: SqlLike, token: string): Promise<DigestLink | null> {
  const [row] = await sql<{ project_id: string }[]>`
    update digest_subscriptions set enabled = false, updated_at = now() where unsubscribe_token = ${token} returning project_id`;
  return row ? digestLink(sql, token) : null;
}

/** The PostgreSQL part of a digest: the week's new items, the titles of changed items, the alerts that fired. */
export type DigestFeedbackPart = Pick<DigestContent['feedback'], 'new_count' | 'top_by_votes' | 'top_by_mrr'>;

type ItemRow = DigestItem;

const itemColumns = (sql: SqlLike) => sql`id, title, status, vote_count, total_mrr`;

/**
 * Items created in [start, end): how many (merged ones included, as the metrics' feedback_count
 * counts them), and among the unmerged ones the DIGEST_TOP with the most votes and the DIGEST_TOP
 * with the most voters' MRR (none without MRR), ties in the order of GET /projects/:id/feedbacks (the newest first).
 */
export async function digestFeedback(sql: SqlLike, projectId: string, start: Date, end: Date): Promise<DigestFeedbackPart> {
  const [counted] = await sql<{ n: number }[]>`
    select count(*)::int as n from feedbacks where project_id = ${projectId} and created_at >= ${start} and created_at < ${end}`;
  const top = (order: 'votes' | 'mrr') => sql<ItemRow[]>`
    select ${itemColumns(sql)} from (
      select f.id, f.title, f.status, f.vote_count, f.created_at,
             (select sum(u.mrr)::float8 from votes v join sdk_users u on u.project_id = f.project_id and u.user_id = v.user_id
              where v.feedback_id = f.id and u.mrr is not null) as total_mrr
      from feedbacks f
      where f.project_id = ${projectId} and f.created_at >= ${start} and f.created_at < ${end} and f.merged_into_id is null
    ) t
    ${order === 'mrr' ? sql`where total_mrr > 0 order by total_mrr desc, vote_count desc, created_at desc, id desc` : sql`order by vote_count desc, created_at desc, id desc`}
    limit ${DIGEST_TOP}`;
  const [byVotes, byMrr] = await Promise.all([top('votes'), top('mrr')]);
  const shape = (rows: ItemRow[]) => rows.map((row) => ({ ...row, total_mrr: row.total_mrr === null ? null : Number(row.total_mrr) }));
  return { new_count: counted?.n ?? 0, top_by_votes: shape(byVotes), top_by_mrr: shape(byMrr) };
}

/** The current title, status, votes and voters' MRR of items of the project, by id. */
export async function digestItems(sql: SqlLike, projectId: string, ids: string[]): Promise<Map<string, DigestItem>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<ItemRow[]>`
    select f.id, f.title, f.status, f.vote_count,
           (select sum(u.mrr)::float8 from votes v join sdk_users u on u.project_id = f.project_id and u.user_id = v.user_id
            where v.feedback_id = f.id and u.mrr is not null) as total_mrr
    from feedbacks f where f.project_id = ${projectId} and f.id in ${sql(ids)}`;
  return new Map(rows.map((row) => [row.id, { ...row, total_mrr: row.total_mrr === null ? null : Number(row.total_mrr) }]));
}

/** The project's alerts whose check in [start, end) made them fire, oldest first. */
export async function firedAlerts(sql: SqlLike, projectId: string, start: Date, end: Date): Promise<DigestFiredAlert[]> {
  const rows = await sql<{ alert_id: string; name: string; interval_start: Date; value: number | null; checked_at: Date }[]>`
    select c.alert_id, a.name, c.interval_start, c.value, c.checked_at
    from alert_checks c join alerts a on a.id = c.alert_id
    where a.project_id = ${projectId} and c.notified = 'firing' and c.checked_at >= ${start} and c.checked_at < ${end}
    order by c.checked_at, c.id`;
  return rows.map((row) => ({
    alert_id: row.alert_id,
    name: row.name,
    interval_start: apiTime(row.interval_start),
    value: row.value,
    fired_at: apiTime(row.checked_at),
  }));
}

/** A project whose digest of a week is due: not suspended, existing before the week ended, not sent yet. */
export type DigestProject = { id: string; name: string; plan: Plan; session_timeout_minutes: number };

export async function projectsDueForDigest(sql: SqlLike, weekStart: string, weekEnd: Date, limit: number): Promise<DigestProject[]> {
  return sql<DigestProject[]>`
    select p.id, p.name, a.plan, p.session_timeout_minutes
    from projects p join accounts a on a.id = p.account_id
    where not p.suspended and p.created_at < ${weekEnd}
      and not exists (select 1 from digest_runs r where r.project_id = p.id and r.week_start = ${weekStart}::date)
    order by p.id
    limit ${limit}`;
}

/**
 * Records that the project's digest of the week is sent, with what it said; false when another
 * process recorded it first (the primary key): exactly one process sends each week's digest.
 */
export async function recordDigestRun(sql: SqlLike, projectId: string, weekStart: string, content: DigestContent): Promise<boolean> {
  const rows = await sql`
    insert into digest_runs (project_id, week_start, content)
    values (${projectId}, ${weekStart}::date, ${sql.json(content as never)})
    on conflict do nothing
    returning project_id`;
  return rows.length === 1;
}
