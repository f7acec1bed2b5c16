import type { CommentRow } from './comments.repo.js';
import type { Sql, SqlLike } from './db.js';
import type { JobStatus } from './erasures.repo.js';
import { findFeedback } from './feedback.repo.js';
import type { FeedbackRow } from './feedback.row.js';
import { deferStepJob, dueStepJobs, stepJobAttemptFailed } from './step-jobs.repo.js';

/** Steps of a project deletion's ClickHouse side, in order. */
export const PROJECT_DELETION_STEPS = ['settle', 'clickhouse', 'done'] as const;
export type ProjectDeletionStep = (typeof PROJECT_DELETION_STEPS)[number];

export type ProjectDeletionRow = {
  id: string;
  project_id: string;
  project_name: string;
  account_id: string;
  status: JobStatus;
  step: ProjectDeletionStep;
  settled_after: Date;
  attempts: number;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
};

const deletionColumns = (sql: SqlLike) => sql`
  id, project_id, project_name, account_id, status, step, settled_after, attempts, last_error, created_at, updated_at, completed_at`;

export type DeleteFeedbackResult = { feedback: FeedbackRow; deletedIds: string[] } | null;

/**
 * Deletes a feedback item of the project with its votes and comments (on delete cascade), and the
 * items merged into it (their votes moved to it when they were merged; without it they would point
 * nowhere). Items locked in id order, like every other writer of feedback rows. Null when the item
 * is not in the project.
 */
export async function deleteFeedback(sql: Sql, projectId: string, id: string): Promise<DeleteFeedbackResult> {
  return sql.begin(async (tx) => {
    const feedback = await findFeedback(tx, projectId, id, undefined);
    if (!feedback) return null;
    const locked = await tx<{ id: string }[]>`
      select id from feedbacks
      where project_id = ${projectId} and (id = ${id} or merged_into_id = ${id})
      order by id
      for update`;
    const ids = locked.map((row) => row.id);
    if (!ids.includes(id)) return null; // deleted meanwhile
    await tx`delete from feedbacks where id = any(${ids}::uuid[]) and merged_into_id is not null`;
    await tx`delete from feedbacks where id = ${id}`;
    return { feedback, deletedIds: ids };
  });
}

/** Deletes one comment of an item of the project (moderation); comment_count follows. Null when it is not there. */
export async function deleteComment(sql: Sql, projectId: string, feedbackId: string, commentId: string): Promise<CommentRow | null> {
  return sql.begin(async (tx) => {
    const [feedback] = await tx`select 1 from feedbacks where id = ${feedbackId} and project_id = ${projectId} for update`;
    if (!feedback) return null;
    const [comment] = await tx<CommentRow[]>`
      delete from comments where id = ${commentId} and feedback_id = ${feedbackId}
      returning id, feedback_id, content, user_id, is_admin, created_at`;
    if (!comment) return null;
    await tx`update feedbacks set comment_count = comment_count - 1, updated_at = now() where id = ${feedbackId}`;
    return comment;
  });
}

/**
 * Deletes a project and, by cascade, everything it has in PostgreSQL (feedback, votes, comments,
 * SDK users, members and their tokens, integrations, notifications, deliveries, erasures), and
 * its facts not yet relayed; records the job that deletes its ClickHouse rows, in the same
 * transaction. Null when the project is not there (any more).
 */
export async function deleteProject(
  sql: Sql,
  project: { id: string; name: string; account_id: string },
): Promise<ProjectDeletionRow | null> {
  return sql.begin(async (tx) => {
    const gone = await tx`delete from projects where id = ${project.id} returning 1`;
    if (gone.length === 0) return null;
    // Unclaimed facts would be relayed after the ClickHouse deletion; claimed ones are in a
    // relay's hands and are waited for by the job's settle step.
    await tx`delete from outbox where project_id = ${project.id} and batch_id is null`;
    const [job] = await tx<ProjectDeletionRow[]>`
      insert into project_deletions (project_id, project_name, account_id, settled_after)
      values (${project.id}, ${project.name}, ${project.account_id}, clock_timestamp())
      returning ${deletionColumns(tx)}`;
    return job as ProjectDeletionRow;
  });
}

export async function findProjectDeletion(sql: SqlLike, accountId: string, id: string): Promise<ProjectDeletionRow | null> {
  const [row] = await sql<ProjectDeletionRow[]>`
    select ${deletionColumns(sql)} from project_deletions where id = ${id} and account_id = ${accountId}`;
  return row ?? null;
}

export async function getProjectDeletion(sql: SqlLike, id: string): Promise<ProjectDeletionRow | null> {
  const [row] = await sql<ProjectDeletionRow[]>`select ${deletionColumns(sql)} from project_deletions where id = ${id}`;
  return row ?? null;
}

/** Ids of project deletions a worker may run now, oldest first. */
export const dueProjectDeletions = (sql: SqlLike, limit: number) => dueStepJobs(sql, 'project_deletions', limit);

export async function advanceProjectDeletion(sql: SqlLike, id: string, next: ProjectDeletionStep): Promise<void> {
  const done = next === 'done';
  await sql`
    update project_deletions set
      step = ${next}, status = ${done ? 'done' : 'running'}, attempts = 0, last_error = null,
      next_attempt_at = now(), completed_at = ${done ? sql`now()` : null}, updated_at = now()
    where id = ${id}`;
}

/** The settle step waits for facts still in a relay's hands: try again after `delayMs`. */
export const deferProjectDeletion = (sql: SqlLike, id: string, delayMs: number) => deferStepJob(sql, 'project_deletions', id, delayMs);

/** A failed attempt: retried after a back-off, or marked failed after `maxAttempts`. */
export const projectDeletionAttemptFailed = (sql: SqlLike, id: string, error: string, maxAttempts: number, backoffMs: number) =>
  stepJobAttemptFailed(sql, 'project_deletions', id, error, maxAttempts, backoffMs);
