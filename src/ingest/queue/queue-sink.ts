import type { Redis } from 'ioredis';
import { uuidv7 } from 'uuidv7';
import type { IngestQueue } from './ingest.queue.js';
import { eventKey, type IngestEvent } from '../../core/event.js';
import { SinkUnavailableError, type EventSink } from '../event-sink.js';
import { MicroBatcher } from '../micro-batcher.js';

/** How long the first response to a client eventId is remembered (the idempotency window). */
export const EVENT_ID_TTL_SECONDS = 7 * 24 * 3600;
const ADD_TIMEOUT_MS = 5_000;

/**
 * With Redis: requests arriving within a few milliseconds are coalesced into one BullMQ job (one
 * Redis round trip for many requests); the request is answered once the job is stored. The
 * workers write jobs to ClickHouse.
 *
 * A client eventId is claimed in Redis with the event as first accepted, so a retry gets the same
 * response. The retried event is queued again all the same: if the first request died between
 * claim and queue, this copy is the one stored, and if not, the worker drops it as a duplicate.
 */
export class QueueEventSink implements EventSink {
  readonly #batcher: MicroBatcher<IngestEvent, void>;
  #closed = false;

  constructor(
    private readonly queue: IngestQueue,
    private readonly redis: Redis,
    private readonly options: { keyPrefix: string; maxItems?: number; maxDelayMs?: number },
  ) {
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
    const { accepted, claimed } = await this.#claimClientIds(events);
    try {
      await this.#batcher.add(accepted);
    } catch (error) {
      // Not acknowledged: release the claims so a retry is treated as new, not as a duplicate.
      if (claimed.length > 0) await this.redis.del(...claimed).catch(() => undefined);
      throw error;
    }
    return accepted;
  }

  #responseKey(event: IngestEvent): string {
    return `${this.options.keyPrefix}:event-id:${eventKey(event.project_id, event.event_id)}`;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#batcher.drain();
  }

  /** Claims each client eventId (SET NX); a taken one is replaced by the event first accepted. */
  async #claimClientIds(events: IngestEvent[]): Promise<{ accepted: IngestEvent[]; claimed: string[] }> {
    const withClientId = events.filter((event) => event.id_from_client);
    if (withClientId.length === 0) return { accepted: events, claimed: [] };
    const pipeline = this.redis.pipeline();
    for (const event of withClientId) {
      pipeline.set(this.#responseKey(event), JSON.stringify(event), 'EX', EVENT_ID_TTL_SECONDS, 'NX', 'GET');
    }
    const replies = await runPipeline(pipeline);
    const firstAccepted = new Map<string, IngestEvent>();
    const claimed: string[] = [];
    withClientId.forEach((event, i) => {
      const previous = replies[i];
      const key = this.#responseKey(event);
      if (typeof previous === 'string') firstAccepted.set(key, JSON.parse(previous) as IngestEvent);
      else if (!firstAccepted.has(key)) {
        firstAccepted.set(key, event);
        claimed.push(key);
      }
    });
    const accepted = events.map((event) => (event.id_from_client ? (firstAccepted.get(this.#responseKey(event)) ?? event) : event));
    return { accepted, claimed };
  }

  async #enqueue(events: IngestEvent[]): Promise<void> {
    const jobId = uuidv7();
    await withTimeout(this.queue.add('events', { events }, { jobId }), ADD_TIMEOUT_MS);
  }
}

async function runPipeline(pipeline: ReturnType<Redis['pipeline']>): Promise<unknown[]> {
  const results = await withTimeout(pipeline.exec(), ADD_TIMEOUT_MS);
  if (!results) throw new SinkUnavailableError('redis pipeline aborted');
  return results.map(([error, value]) => {
    if (error) throw new SinkUnavailableError(`redis: ${error.message}`);
    return value;
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SinkUnavailableError(`redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
