import type { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import { eventKey, type IngestEvent } from '../../core/event.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { findStoredEvents } from '../../olap/tables/events.table.js';
import { type EventSink, SinkUnavailableError } from '../event-sink.js';
import { ID_LOOKBACK_MS } from '../id-filter.js';
import { MicroBatcher } from '../micro-batcher.js';
import type { IngestQueue } from './ingest.queue.js';
import { type ClaimOutcome, RedisIdClaims } from './redis-id-claims.js';

const ADD_TIMEOUT_MS = 5_000;

/**
 * With Redis: requests arriving within a few milliseconds are coalesced into one BullMQ job (one
 * Redis round trip for many requests); the request is answered once the job is stored. The
 * workers write jobs to ClickHouse.
 *
 * A client eventId is claimed in Redis (RedisIdClaims) with the event as first accepted, until
 * the worker has stored it; then a time-bucketed filter remembers it for the idempotency window
 * (24 to 28 hours) at 3 bytes per id. A retry of a claimed id gets the first event and is
 * queued again all the same: if the first request died between claim and queue, this copy is the
 * one stored, and if not, the worker drops it as a duplicate. A retry the filter may know is
 * looked up in ClickHouse (bounded by the window): found, it is answered with the stored event
 * and not queued; not found (a rare false hit), it is claimed as new.
 */
export class QueueEventSink implements EventSink {
  readonly #batcher: MicroBatcher<IngestEvent, void>;
  readonly #claims: RedisIdClaims;
  #closed = false;

  constructor(
    private readonly queue: IngestQueue,
    private readonly redis: Redis,
    private readonly options: {
      keyPrefix: string;
      /** For the confirmation of a retried eventId the filter knows. */
      clickhouse: ClickHouseClient;
      /** The rate of new eventIds the filter is sized for (IDEMPOTENCY_IDS_PER_SECOND). */
      idsPerSecond?: number;
      maxItems?: number;
      maxDelayMs?: number;
    },
  ) {
    this.#claims = new RedisIdClaims(redis, options.keyPrefix, options.idsPerSecond ?? 1000);
    this.#batcher = new MicroBatcher({
      maxItems: options.maxItems ?? 5_000,
      // The requests read in one event-loop turn go as one job, sent at the end of that turn.
      // One job is on its way at a time: requests arriving meanwhile form the next job, sent as
      // soon as it is stored, so jobs grow with load and the per-job cost of BullMQ (producer,
      // Redis, worker: about 1 ms of CPU) is shared by more events. Every request waits for the
      // job before it, so there is no timer in the way: in interleaved runs at 50 connections a
      // 2 ms timer instead of the turn's end served 12-17% fewer requests per second, and a
      // minimum of 3 or 10 ms between jobs 8-29% fewer (BENCHMARKS.md).
      maxDelayMs: options.maxDelayMs ?? 0,
      maxConcurrentFlushes: 1,
      flush: (events) => this.#enqueue(events),
    });
  }

  async submit(events: IngestEvent[]): Promise<IngestEvent[]> {
    if (this.#closed) throw new SinkUnavailableError('shutting down');
    // Most events carry no client eventId: they go straight to the batcher, without the claim's
    // await (one async hop less per request on the ingestion path, BENCHMARKS.md).
    if (!events.some((event) => event.id_from_client)) {
      await this.#batcher.add(events);
      return events;
    }
    const { answer, queued, claimed } = await this.#claimClientIds(events);
    try {
      if (queued.length > 0) await this.#batcher.add(queued);
    } catch (error) {
      // Not acknowledged: release the claims so a retry is treated as new, not as a duplicate.
      await this.#claims.release(claimed).catch(() => undefined);
      throw error;
    }
    return answer;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batcher.drain();
  }

  /**
   * Claims each client eventId; a claimed one is answered (and queued again) as its first event;
   * one the filter may know is answered with the stored event if ClickHouse has it.
   */
  async #claimClientIds(events: IngestEvent[]): Promise<{ answer: IngestEvent[]; queued: IngestEvent[]; claimed: IngestEvent[] }> {
    const withClientId = events.filter((event) => event.id_from_client);
    const outcomes = await this.#redis(this.#claims.claim(withClientId, true));
    const maybeStored = withClientId.filter((_, i) => outcomes[i]?.kind === 'maybe-stored');
    const stored = new Map<string, IngestEvent>();
    const recheck = new Map<IngestEvent, ClaimOutcome>();
    if (maybeStored.length > 0) {
      let found: IngestEvent[];
      try {
        found = await findStoredEvents(
          this.options.clickhouse,
          [...new Set(maybeStored.map((event) => event.project_id))],
          [...new Set(maybeStored.map((event) => event.event_id))],
          ID_LOOKBACK_MS,
        );
      } catch (error) {
        throw new SinkUnavailableError('a retried eventId cannot be checked while ClickHouse is unavailable', { cause: error });
      }
      for (const event of found) stored.set(eventKey(event.project_id, event.event_id), event);
      // Not stored after all (the filter's rare false hit, or a claim that was released): new.
      const fresh = maybeStored.filter((event) => !stored.has(eventKey(event.project_id, event.event_id)));
      if (fresh.length > 0) {
        const again = await this.#redis(this.#claims.claim(fresh, false));
        for (const [i, event] of fresh.entries()) recheck.set(event, again[i] as ClaimOutcome);
      }
    }
    const answer: IngestEvent[] = [];
    const queued: IngestEvent[] = [];
    const claimed: IngestEvent[] = [];
    let next = 0;
    for (const event of events) {
      if (!event.id_from_client) {
        answer.push(event);
        queued.push(event);
        continue;
      }
      let outcome = outcomes[next++] as ClaimOutcome;
      if (outcome.kind === 'maybe-stored') {
        const found = stored.get(eventKey(event.project_id, event.event_id));
        if (found) {
          answer.push(found);
          continue;
        }
        outcome = recheck.get(event) as ClaimOutcome;
      }
      if (outcome.kind === 'first') {
        answer.push(outcome.event);
        queued.push(outcome.event);
      } else {
        answer.push(event);
        queued.push(event);
        claimed.push(event);
      }
    }
    return { answer, queued, claimed };
  }

  #redis<T>(promise: Promise<T>): Promise<T> {
    return withTimeout(promise, ADD_TIMEOUT_MS).catch((error: unknown) => {
      if (error instanceof SinkUnavailableError) throw error;
      throw new SinkUnavailableError(`redis: ${(error as Error).message}`, { cause: error });
    });
  }

  async #enqueue(events: IngestEvent[]): Promise<void> {
    const jobId = uuidv7();
    await withTimeout(this.queue.add('events', { events }, { jobId }), ADD_TIMEOUT_MS);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SinkUnavailableError(`redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
