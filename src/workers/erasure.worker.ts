import type { Logger } from '../core/logger.js';
import type { IngestQueue } from '../ingest/queue/ingest.queue.js';
import { deleteProjectData, deleteUserEvents, eraseUserFacts, eventDaysOfUser } from '../olap/data-rights/erasure.js';
import type { ClickHouseTarget } from '../olap/mutations.js';
import { rebuildRollups } from '../olap/tables/rollups.js';
import type { Sql } from '../oltp/db.js';
import { deleteDeadLettersOfUser } from '../oltp/dead-letters.repo.js';
import {
  advanceProjectDeletion,
  deferProjectDeletion,
  dueProjectDeletions,
  getProjectDeletion,
  projectDeletionAttemptFailed,
} from '../oltp/deletions.repo.js';
import {
  advanceErasure,
  deferErasure,
  dueErasures,
  type ErasureRow,
  erasePostgres,
  erasureAttemptFailed,
  getErasure,
  outboxHoldsFactsBefore,
} from '../oltp/erasures.repo.js';
import { DrainLoop } from './drain-loop.js';

/**
 * Whether everything acknowledged before `before` is in ClickHouse: with Redis, no job enqueued
 * before then is still waiting or running; without, the local ingest log has shipped every frame
 * appended before then (EventSink.settledBefore).
 */
export type QueueSettled = (before: Date) => Promise<boolean>;

export type DataRightsDeps = {
  sql: Sql;
  clickhouse: ClickHouseTarget;
  queueSettled: QueueSettled;
  /**
   * Removes the raw events already in ClickHouse from the API's local ingest log (embedded mode:
   * EventSink.purgeShipped), so an erased user's events do not stay on its disk.
   */
  purgeIngestLog?: (() => Promise<void>) | undefined;
  logger: Logger;
  options?: {
    intervalMs?: number;
    /** How long a step waits before it looks again whether earlier facts and events have landed. */
    settleDelayMs?: number;
    maxAttempts?: number;
    backoffMs?: number;
  };
};

/** Arbitrary constant: the first key of the advisory locks that keep one worker on one job. */
const JOB_LOCK_CLASS = 72_026;

/**
 * Runs erasures and project deletions (docs/data-rights.md), one step at a time. Each job is held
 * under a session advisory lock while a worker runs it: two workers never run one job at once,
 * and the lock of a worker that dies is released by PostgreSQL with its connection, so the next
 * worker resumes the job at once, at the step recorded last. Each step's end is committed before
 * the next begins, and every step can run twice with the same result.
 */
export class DataRightsWorker {
  readonly #loop: DrainLoop;
  readonly #settleDelayMs: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;

  constructor(private readonly deps: DataRightsDeps) {
    const options = deps.options ?? {};
    this.#settleDelayMs = options.settleDelayMs ?? 500;
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#backoffMs = options.backoffMs ?? 5_000;
    this.#loop = new DrainLoop(() => this.drain(), deps.logger, {
      intervalMs: options.intervalMs ?? 500,
      failure: 'data rights worker: a pass failed, will retry',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Runs every due job once as far as it can go; returns how many jobs it worked on. */
  async drain(): Promise<number> {
    let worked = 0;
    for (const id of await dueErasures(this.deps.sql, 20)) if (await this.#locked('erasure', id, () => this.runErasure(id))) worked++;
    for (const id of await dueProjectDeletions(this.deps.sql, 20)) {
      if (await this.#locked('project', id, () => this.runProjectDeletion(id))) worked++;
    }
    return worked;
  }

  /** Runs `work` while holding the job's advisory lock; false when another worker holds it. */
  async #locked(kind: string, id: string, work: () => Promise<void>): Promise<boolean> {
    const connection = await this.deps.sql.reserve();
    try {
      const [lock] = await connection<{ locked: boolean }[]>`
        select pg_try_advisory_lock(${JOB_LOCK_CLASS}, hashtext(${`${kind}:${id}`})) as locked`;
      if (!lock?.locked) return false;
      try {
        await work();
      } finally {
        await connection`select pg_advisory_unlock(${JOB_LOCK_CLASS}, hashtext(${`${kind}:${id}`}))`;
      }
      return true;
    } finally {
      connection.release();
    }
  }

  /** Runs the erasure's steps from the one it reached, until it is done, waits, or fails. */
  async runErasure(id: string): Promise<void> {
    const { sql, logger } = this.deps;
    for (;;) {
      // Read again under the lock: the previous holder may have advanced it.
      const job = await getErasure(sql, id);
      if (!job || job.status === 'done' || job.status === 'failed') return;
      try {
        const waiting = await this.#erasureStep(job);
        if (waiting) {
          await deferErasure(sql, id, this.#settleDelayMs);
          return;
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.warn({ err: error, erasureId: id, step: job.step }, 'erasure step failed, will retry');
        await erasureAttemptFailed(sql, id, `${job.step}: ${message}`, this.#maxAttempts, this.#backoffMs);
        return;
      }
    }
  }

  /** Runs one step and records the next; true when the step has to wait for earlier writes to land. */
  async #erasureStep(job: ErasureRow): Promise<boolean> {
    const { sql, clickhouse } = this.deps;
    const userId = job.user_id;
    if (userId === null) throw new Error('the erasure has no user id left');
    switch (job.step) {
      case 'postgres':
        await erasePostgres(sql, { id: job.id, project_id: job.project_id, user_id: userId, anonymous_id: job.anonymous_id });
        return false;
      case 'settle': {
        const before = job.settled_after ?? new Date();
        if (await outboxHoldsFactsBefore(sql, job.project_id, before)) return true;
        if (!(await this.deps.queueSettled(before))) return true;
        await advanceErasure(sql, job.id, 'clickhouse_days');
        return false;
      }
      case 'clickhouse_days': {
        const days = await eventDaysOfUser(clickhouse, job.project_id, userId);
        await advanceErasure(sql, job.id, 'clickhouse_events', { days, summary: { event_days: days.length } });
        return false;
      }
      case 'clickhouse_events':
        await deleteUserEvents(clickhouse, job.project_id, userId);
        await advanceErasure(sql, job.id, 'clickhouse_facts');
        return false;
      case 'clickhouse_facts':
        await eraseUserFacts(clickhouse, job.project_id, userId, job.anonymous_id);
        await advanceErasure(sql, job.id, 'rollups');
        return false;
      case 'rollups':
        await rebuildRollups(clickhouse, job.project_id, job.days ?? []);
        // Last, once every event and fact of the user sent before the erasure has landed (settle)
        // or been refused: the rows ClickHouse refused are dead letters holding the user.
        await deleteDeadLettersOfUser(sql, job.project_id, userId);
        // And the raw copies of the user's events in the local ingest log (embedded mode).
        await this.deps.purgeIngestLog?.();
        await advanceErasure(sql, job.id, 'done');
        return false;
      case 'done':
        return false;
    }
  }

  /** The ClickHouse side of a deleted project: once its last facts and events have landed, delete them all. */
  async runProjectDeletion(id: string): Promise<void> {
    const { sql, clickhouse, logger } = this.deps;
    for (;;) {
      const job = await getProjectDeletion(sql, id);
      if (!job || job.status === 'done' || job.status === 'failed') return;
      try {
        if (job.step === 'settle') {
          if (
            (await outboxHoldsFactsBefore(sql, job.project_id, job.settled_after)) ||
            !(await this.deps.queueSettled(job.settled_after))
          ) {
            await deferProjectDeletion(sql, id, this.#settleDelayMs);
            return;
          }
          await advanceProjectDeletion(sql, id, 'clickhouse');
        } else if (job.step === 'clickhouse') {
          await deleteProjectData(clickhouse, job.project_id);
          await advanceProjectDeletion(sql, id, 'done');
        } else {
          return;
        }
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.warn({ err: error, deletionId: id, step: job.step }, 'project deletion step failed, will retry');
        await projectDeletionAttemptFailed(sql, id, `${job.step}: ${message}`, this.#maxAttempts, this.#backoffMs);
        return;
      }
    }
  }
}

/** Queue states whose jobs have not reached ClickHouse yet (failed ones wait for an operator). */
const UNFINISHED_STATES = ['active', 'wait', 'delayed', 'prioritized'] as const;

/**
 * With Redis: settled once no job enqueued before `before` is still in the ingest queue. Each
 * state's list is looked at from both ends, which is where its oldest job is whatever the list's order.
 */
export function ingestQueueSettled(queue: Pick<IngestQueue, 'getJobs'>): QueueSettled {
  return async (before) => {
    for (const state of UNFINISHED_STATES) {
      const ends = [...(await queue.getJobs([state], 0, 0, true)), ...(await queue.getJobs([state], -1, -1, true))];
      if (ends.some((job) => job && job.timestamp <= before.getTime())) return false;
    }
    return true;
  };
}
