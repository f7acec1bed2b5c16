import type { SqlLike } from './db.js';

/**
 * The scheduling columns shared by the jobs a worker runs step by step with retries (erasures,
 * project deletions): status, attempts, last_error, next_attempt_at. One statement per question,
 * written once for both tables.
 */
export type StepJobTable = 'erasures' | 'project_deletions';

/** Ids of the jobs a worker may run now, oldest first. */
export async function dueStepJobs(sql: SqlLike, table: StepJobTable, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select id from ${sql(table)}
    where status in ('pending', 'running') and next_attempt_at <= now()
    order by created_at
    limit ${limit}`;
  return rows.map((row) => row.id);
}

/** The step waits for something else (facts still on their way): try again after `delayMs`. */
export async function deferStepJob(sql: SqlLike, table: StepJobTable, id: string, delayMs: number): Promise<void> {
  await sql`
    update ${sql(table)} set status = 'running', next_attempt_at = now() + ${delayMs} * interval '1 millisecond', updated_at = now()
    where id = ${id}`;
}

/** A failed attempt: retried after an exponential back-off (at most an hour), or marked failed after `maxAttempts`. */
export async function stepJobAttemptFailed(
  sql: SqlLike,
  table: StepJobTable,
  id: string,
  error: string,
  maxAttempts: number,
  backoffMs: number,
): Promise<void> {
  await sql`
    update ${sql(table)} set
      attempts = attempts + 1,
      last_error = ${error.slice(0, 2000)},
      status = case when attempts + 1 >= ${maxAttempts} then 'failed' else 'running' end,
      next_attempt_at = now() + least(${backoffMs} * power(2, attempts), 3600000) * interval '1 millisecond',
      updated_at = now()
    where id = ${id}`;
}
