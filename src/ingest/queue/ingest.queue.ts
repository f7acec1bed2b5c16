import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { IngestEvent } from '../../core/event.js';
import type { FactRow } from '../../core/fact.js';

/** One queue carries both kinds of ClickHouse writes; the job name says which. */
export const INGEST_QUEUE = 'ingest';

export type IngestJobData = { events: IngestEvent[] } | { facts: FactRow[] };
export type IngestJobName = 'events' | 'facts';

/**
 * A failing insert is retried with exponential backoff (1 s, 2 s, 4 s … about 68 minutes in all
 * over 13 attempts), then kept in the failed set for an operator: never dropped silently.
 * Completed jobs are removed at once: their rows are in ClickHouse, and their payloads would
 * only fill Redis.
 */
export const INGEST_JOB_OPTIONS: JobsOptions = {
  attempts: 13,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: false,
};

export function createIngestQueue(connection: Redis, prefix: string): Queue<IngestJobData, void, IngestJobName> {
  return new Queue<IngestJobData, void, IngestJobName>(INGEST_QUEUE, {
    connection,
    prefix,
    defaultJobOptions: INGEST_JOB_OPTIONS,
  });
}

export type IngestQueue = ReturnType<typeof createIngestQueue>;
