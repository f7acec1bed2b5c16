import { randomUUID } from 'node:crypto';
import type { Sql, SqlLike } from './db.js';
import { deferStepJob, dueStepJobs, stepJobAttemptFailed } from './step-jobs.repo.js';

export const JOB_STATUSES = ['pending', 'running', 'done', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Steps of an erasure, in order (src/workers/erasure.worker.ts runs them). */
export const ERASURE_STEPS = ['postgres', 'settle', 'clickhouse_days', 'clickhouse_events', 'clickhouse_facts', 'rollups', 'done'] as const;
export type ErasureStep = (typeof ERASURE_STEPS)[number];

export type ErasureSummary = {
  votes_deleted?: number;
  feedbacks_anonymized?: number;
  comments_anonymized?: number;
  sdk_user_deleted?: boolean;
  deliveries_deleted?: number;
  notifications_scrubbed?: number;
  event_days?: number;
};

export type ErasureRow = {
  id: string;
  project_id: string;
  user_id: string | null;
  anonymous_id: string;
  status: JobStatus;
  step: ErasureStep;
  days: string[] | null;
  settled_after: Date | null;
  summary: ErasureSummary;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
};

const columns = (sql: SqlLike) => sql`
  id, project_id, user_id, anonymous_id, status, step,
  (select array_agg(to_char(d, 'YYYY-MM-DD') order by d) from unnest(days) as d) as days,
  settled_after, summary, attempts, last_error, created_at, updated_at, completed_at`;

/**
 * Asks for the erasure of one SDK user of the project. An erasure of the same user that is still
 * open is answered instead of a second one (the unique index on open erasures makes this hold
 * under concurrent requests too).
 */
export async function requestErasure(sql: SqlLike, projectId: string, userId: string): Promise<{ erasure: ErasureRow; created: boolean }> {
  const anonymousId = `erased-${randomUUID()}`;
  const [created] = await sql<ErasureRow[]>`
    insert into erasures (project_id, user_id, anonymous_id)
    values (${projectId}, ${userId}, ${anonymousId})
    on conflict (project_id, user_id) where status in ('pending', 'running') do nothing
    returning ${columns(sql)}`;
  if (created) return { erasure: created, created: true };
  const [open] = await sql<ErasureRow[]>`
    select ${columns(sql)} from erasures
    where project_id = ${projectId} and user_id = ${userId} and status in ('pending', 'running')`;
  if (!open) return requestErasure(sql, projectId, userId); // it finished in between: ask again
  return { erasure: open, created: false };
}

export async function findErasure(sql: SqlLike, projectId: string, id: string): Promise<ErasureRow | null> {
  const [row] = await sql<ErasureRow[]>`select ${columns(sql)} from erasures where id = ${id} and project_id = ${projectId}`;
  return row ?? null;
}

export async function getErasure(sql: SqlLike, id: string): Promise<ErasureRow | null> {
  const [row] = await sql<ErasureRow[]>`select ${columns(sql)} from erasures where id = ${id}`;
  return row ?? null;
}

/** Ids of erasures a worker may run now, oldest first. */
export const dueErasures = (sql: SqlLike, limit: number) => dueStepJobs(sql, 'erasures', limit);

/** Records that `step` is done and `next` comes, with what the step learnt; attempts restart. */
export async function advanceErasure(
  sql: SqlLike,
  id: string,
  next: ErasureStep,
  extra: { days?: string[]; summary?: ErasureSummary } = {},
): Promise<void> {
  const done = next === 'done';
  await sql`
    update erasures set
      step = ${next},
      status = ${done ? 'done' : 'running'},
      days = ${extra.days === undefined ? sql`days` : sql`${extra.days}::date[]`},
      summary = summary || ${sql.json(extra.summary ?? {})},
      -- The record of a finished erasure keeps no trace of whom it erased.
      user_id = ${done ? null : sql`user_id`},
      attempts = 0,
      last_error = null,
      next_attempt_at = now(),
      completed_at = ${done ? sql`now()` : null},
      updated_at = now()
    where id = ${id}`;
}

/** The step waits for something else (facts still on their way): try again after `delayMs`. */
export const deferErasure = (sql: SqlLike, id: string, delayMs: number) => deferStepJob(sql, 'erasures', id, delayMs);

/** A failed attempt: retried after a back-off, or marked failed after `maxAttempts`. */
export const erasureAttemptFailed = (sql: SqlLike, id: string, error: string, maxAttempts: number, backoffMs: number) =>
  stepJobAttemptFailed(sql, 'erasures', id, error, maxAttempts, backoffMs);

/** An operator's retry of a failed erasure: it resumes at the step where it stopped. */
export async function retryErasure(sql: SqlLike, id: string): Promise<void> {
  await sql`update erasures set status = 'running', attempts = 0, next_attempt_at = now(), updated_at = now() where id = ${id} and status = 'failed'`;
}

/**
 * The PostgreSQL step, in one transaction: deletes the user's votes (the items' vote_count and,
 * since total_mrr is summed over voters, their total_mrr follow), the SDK user, the deliveries of
 * emails addressed to them as voter or submitter; anonymizes their feedback items and comments
 * (kept for the board, attributed to the erasure's anonymous id, email and opt-in cleared) and
 * the notification snapshots that name them. Run twice, the second run finds nothing left.
 * Returns what it changed, and the clock at its end: facts written before that must reach
 * ClickHouse before the ClickHouse steps run.
 */
export async function erasePostgres(
  sql: Sql,
  job: { id: string; project_id: string; user_id: string; anonymous_id: string },
): Promise<ErasureSummary> {
  const { project_id: projectId, user_id: userId, anonymous_id: anonymousId } = job;
  return sql.begin(async (tx) => {
    // The items the user voted on, locked in id order first (as vote and merge requests lock
    // them), so this cannot deadlock with a concurrent vote.
    const voted = await tx<{ id: string }[]>`
      select f.id from feedbacks f
      where f.project_id = ${projectId}
        and exists (select 1 from votes v where v.feedback_id = f.id and v.user_id = ${userId})
      order by f.id
      for update of f`;
    const ids = voted.map((row) => row.id);
    // Emails sent to the user: deliveries carry the unsubscribe token of the vote or of the
    // submitted item that put the address on the list; a changelog email, a token of its own,
    // so it is found by its address (one of the user's voting or submitting addresses).
    const deliveries = await tx`
      delete from deliveries d
      where d.project_id = ${projectId} and d.channel = 'email'
        and (d.unsubscribe_token in (
          select v.unsubscribe_token from votes v where v.feedback_id = any(${ids}::uuid[]) and v.user_id = ${userId}
          union all
          select f.submitter_unsubscribe_token from feedbacks f where f.project_id = ${projectId} and f.user_id = ${userId}
        ) or (
          d.notification_id in (select n.id from notifications n where n.project_id = ${projectId} and n.type = 'changelog.published')
          and d.recipient in (
            select lower(v.email) from votes v where v.feedback_id = any(${ids}::uuid[]) and v.user_id = ${userId} and v.email is not null
            union all
            select lower(f.user_email) from feedbacks f where f.project_id = ${projectId} and f.user_id = ${userId} and f.user_email is not null
          )
        ))
      returning 1`;
    const votes = await tx`
      delete from votes where feedback_id = any(${ids}::uuid[]) and user_id = ${userId}
      returning feedback_id`;
    await tx`
      update feedbacks set vote_count = vote_count - 1, updated_at = now()
      where id = any(${votes.map((row) => row.feedback_id as string)}::uuid[])`;
    const sdkUser = await tx`delete from sdk_users where project_id = ${projectId} and user_id = ${userId} returning 1`;
    const feedbacks = await tx`
      update feedbacks set
        user_id = ${anonymousId}, user_email = null, submitter_notify = false,
        submitter_unsubscribe_token = gen_random_uuid(), updated_at = now()
      where project_id = ${projectId} and user_id = ${userId}
      returning 1`;
    const comments = await tx`
      update comments c set user_id = ${anonymousId}
      from feedbacks f
      where f.id = c.feedback_id and f.project_id = ${projectId} and c.user_id = ${userId}
      returning 1`;
    // Snapshots of the items in pending and sent notifications, and the merge audience lists.
    const submitted = await tx`
      update notifications set payload = jsonb_set(
          jsonb_set(payload, '{feedback,user_id}', to_jsonb(${anonymousId}::text)),
          '{feedback,user_email}', 'null'::jsonb)
      where project_id = ${projectId} and payload #>> '{feedback,user_id}' = ${userId}
      returning 1`;
    // A changelog announcement holds snapshots of all its linked items.
    const announced = await tx`
      update notifications set payload = jsonb_set(payload, '{items}', (
          select coalesce(jsonb_agg(
                   case when x.item ->> 'user_id' = ${userId}
                        then x.item || jsonb_build_object('user_id', ${anonymousId}::text, 'user_email', null)
                        else x.item end
                   order by x.position), '[]'::jsonb)
          from jsonb_array_elements(payload -> 'items') with ordinality as x(item, position)))
      where project_id = ${projectId} and type = 'changelog.published'
        and exists (select 1 from jsonb_array_elements(payload -> 'items') as i where i ->> 'user_id' = ${userId})
      returning 1`;
    const audiences = await tx`
      update notifications set payload = jsonb_set(payload, '{audience,user_ids}', (
          select coalesce(jsonb_agg(u), '[]'::jsonb)
          from jsonb_array_elements(payload #> '{audience,user_ids}') as u
          where u #>> '{}' <> ${userId}))
      where project_id = ${projectId} and (payload #> '{audience,user_ids}') ? ${userId}
      returning 1`;
    const summary: ErasureSummary = {
      votes_deleted: votes.length,
      feedbacks_anonymized: feedbacks.length,
      comments_anonymized: comments.length,
      sdk_user_deleted: sdkUser.length > 0,
      deliveries_deleted: deliveries.length,
      notifications_scrubbed: submitted.length + announced.length + audiences.length,
    };
    // The step's end commits with its work: a crash either redoes all of it or none.
    await tx`
      update erasures set
        step = 'settle', status = 'running', settled_after = clock_timestamp(),
        summary = summary || ${tx.json(summary)}, attempts = 0, last_error = null,
        next_attempt_at = now(), updated_at = now()
      where id = ${job.id} and step = 'postgres'`;
    return summary;
  });
}

/** Whether the outbox still holds a fact of the project written before `before` (not relayed yet). */
export async function outboxHoldsFactsBefore(sql: SqlLike, projectId: string, before: Date): Promise<boolean> {
  const [row] = await sql<{ held: boolean }[]>`
    select exists (
      select 1 from outbox
      -- before came through a JS Date (milliseconds): a margin of one covers its lost microseconds.
      where project_id = ${projectId} and occurred_at < ${before}::timestamptz + interval '1 millisecond'
    ) as held`;
  return row?.held ?? false;
}
