import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { createSql, type Sql } from '../../src/oltp/db.js';
import { deferProjectDeletion, dueProjectDeletions, projectDeletionAttemptFailed } from '../../src/oltp/deletions.repo.js';
import { deferErasure, dueErasures, erasureAttemptFailed } from '../../src/oltp/erasures.repo.js';
import { migratePostgres } from '../../src/oltp/migrations.js';
import { databaseUrlFor } from '../helpers/database.js';
import { stopWhenDone } from '../helpers/lifecycle.js';

/*
 * The scheduling of erasures and project deletions (src/oltp/step-jobs.repo.ts), on a database of
 * its own so that no worker of another test runs these jobs: which jobs are due, a deferred step,
 * a failed attempt's back-off and the last attempt that marks the job failed.
 */

const serverUrl = inject('postgresServerUrl');
const name = `feedback_step_jobs_${process.pid}_${randomBytes(4).toString('hex')}`;
let sql: Sql;

type JobState = { status: string; attempts: number; last_error: string | null; wait_ms: number };

const state = async (table: 'erasures' | 'project_deletions', id: string): Promise<JobState> => {
  const [row] = await sql<JobState[]>`
    select status, attempts, last_error,
      round(extract(epoch from next_attempt_at - now()) * 1000)::int as wait_ms
    from ${sql(table)} where id = ${id}`;
  if (!row) throw new Error(`no ${table} row ${id}`);
  return row;
};

beforeAll(async () => {
  const admin = createSql(serverUrl, { max: 1 });
  try {
    await admin`create database ${admin(name)}`;
  } finally {
    await admin.end({ timeout: 5 });
  }
  stopWhenDone(dropDatabase);
  sql = createSql(databaseUrlFor(serverUrl, name), { max: 2 });
  stopWhenDone(() => sql.end({ timeout: 5 }));
  await migratePostgres(sql);
});

async function dropDatabase() {
  const admin = createSql(serverUrl, { max: 1 });
  try {
    await admin`drop database if exists ${admin(name)} with (force)`;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function jobs(): Promise<{ erasure: string; deletion: string }> {
  const [account] = await sql<{ id: string }[]>`
    insert into accounts (email, plan) values (${`${randomUUID()}@example.com`}, 'free') returning id`;
  const [project] = await sql<{ id: string }[]>`
    insert into projects (account_id, name, api_key_hash) values (${account?.id ?? ''}, 'jobs', ${randomBytes(32)}) returning id`;
  const [erasure] = await sql<{ id: string }[]>`
    insert into erasures (project_id, user_id, anonymous_id) values (${project?.id ?? ''}, 'u1', 'erased-1') returning id`;
  const [deletion] = await sql<{ id: string }[]>`
    insert into project_deletions (project_id, project_name, account_id) values (${randomUUID()}, 'gone', ${account?.id ?? ''}) returning id`;
  return { erasure: erasure?.id ?? '', deletion: deletion?.id ?? '' };
}

describe('erasures and project deletions are scheduled alike', () => {
  it('a new job is due; a deferred one is not until its delay has passed', async () => {
    const { erasure, deletion } = await jobs();
    expect(await dueErasures(sql, 100)).toContain(erasure);
    expect(await dueProjectDeletions(sql, 100)).toContain(deletion);

    await deferErasure(sql, erasure, 60_000);
    await deferProjectDeletion(sql, deletion, 60_000);
    expect(await dueErasures(sql, 100)).not.toContain(erasure);
    expect(await dueProjectDeletions(sql, 100)).not.toContain(deletion);
    for (const job of [await state('erasures', erasure), await state('project_deletions', deletion)]) {
      expect(job.status).toBe('running');
      expect(job.attempts).toBe(0);
      expect(job.wait_ms).toBeGreaterThan(55_000);
      expect(job.wait_ms).toBeLessThanOrEqual(60_000);
    }
  });

  it('a failed attempt waits twice as long as the one before, and the last allowed one marks the job failed', async () => {
    const { erasure, deletion } = await jobs();
    const fail = async (attempt: number) => {
      await erasureAttemptFailed(sql, erasure, `boom ${attempt}`, 3, 10_000);
      await projectDeletionAttemptFailed(sql, deletion, `boom ${attempt}`, 3, 10_000);
    };

    await fail(1);
    for (const job of [await state('erasures', erasure), await state('project_deletions', deletion)]) {
      expect(job).toMatchObject({ status: 'running', attempts: 1, last_error: 'boom 1' });
      expect(job.wait_ms).toBeGreaterThan(5_000);
      expect(job.wait_ms).toBeLessThanOrEqual(10_000);
    }
    await fail(2);
    for (const job of [await state('erasures', erasure), await state('project_deletions', deletion)]) {
      expect(job).toMatchObject({ status: 'running', attempts: 2, last_error: 'boom 2' });
      expect(job.wait_ms).toBeGreaterThan(15_000);
      expect(job.wait_ms).toBeLessThanOrEqual(20_000);
    }
    await fail(3);
    for (const job of [await state('erasures', erasure), await state('project_deletions', deletion)]) {
      expect(job).toMatchObject({ status: 'failed', attempts: 3, last_error: 'boom 3' });
    }
    expect(await dueErasures(sql, 100)).not.toContain(erasure);
    expect(await dueProjectDeletions(sql, 100)).not.toContain(deletion);
  });

  it('the back-off stops growing at an hour, and the error kept is at most 2000 characters', async () => {
    const { erasure } = await jobs();
    await sql`update erasures set attempts = 20 where id = ${erasure}`;
    await erasureAttemptFailed(sql, erasure, 'x'.repeat(5_000), 100, 10_000);
    const job = await state('erasures', erasure);
    expect(job.wait_ms).toBeGreaterThan(3_595_000);
    expect(job.wait_ms).toBeLessThanOrEqual(3_600_000);
    expect(job.last_error).toHaveLength(2000);
  });
});
