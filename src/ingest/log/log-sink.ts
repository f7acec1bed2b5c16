import path from 'node:path';
import { Gauge, Histogram } from 'prom-client';
import { eventKey, type IngestEvent } from '../../core/event.js';
import type { Logger } from '../../core/logger.js';
import type { Telemetry } from '../../core/telemetry.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { findStoredEvents } from '../../olap/tables/events.table.js';
import { type EventSink, SinkUnavailableError } from '../event-sink.js';
import { blocksPerBucket, ID_LOOKBACK_MS, idHashOf } from '../id-filter.js';
import { MicroBatcher } from '../micro-batcher.js';
import type { EventWriter } from '../writer/event-writer.js';
import { CheckpointStore } from './checkpoint.js';
import { type Claim, type ClaimGroup, ClientIdIndex } from './client-ids.js';
import { FRAME_HEADER_BYTES, payloadDocuments } from './frame.js';
import { eventFromLogLine, logLine } from './log-lines.js';
import { SegmentLog } from './segment-log.js';
import { type ShippedBatch, Shipper, type ShipperOptions } from './shipper.js';

/** The log holds INGEST_LOG_MAX_BYTES of events not yet in ClickHouse: new events are refused (503). */
export class LogFullError extends SinkUnavailableError {
  override name = 'LogFullError';
}

export type LogSinkOptions = {
  /** The log's directory (DATA_DIR/ingest-log). */
  dir: string;
  /** Bound of the bytes of events in the log not yet shipped (INGEST_LOG_MAX_BYTES). */
  maxBytes: number;
  /** How long a graceful stop may ship before it leaves the rest for the next start. */
  shutdownShipMs: number;
  writer: EventWriter;
  /** For the lookup of a retried client eventId that was shipped already. */
  clickhouse: ClickHouseClient;
  /** The rate of new eventIds the shipped-id filter is sized for (IDEMPOTENCY_IDS_PER_SECOND). */
  idsPerSecond?: number;
  logger: Logger;
  telemetry?: Telemetry | undefined;
  shipper?: Partial<ShipperOptions>;
};

const DEFAULT_SHIPPER: ShipperOptions = {
  intervalMs: 500,
  maxBatchBytes: 4 * 1024 * 1024,
  backoffMs: 100,
  maxBackoffMs: 5_000,
};

/** Segments are removed whole once shipped; a few per bound, so that happens steadily. */
const segmentBytesFor = (maxBytes: number) => Math.min(16 * 1024 * 1024, Math.max(64 * 1024, Math.floor(maxBytes / 8)));

/** A request's events, or (SEAL) the request to end the active segment before the next frame. */
type Append = { bytes: Buffer; count: number } | typeof SEAL;
const SEAL = 'seal' as const;

/** The claims rebuilt from the log at start: durable already, their hashes made when shipped. */
const REBUILT: ClaimGroup = { durable: Promise.resolve(), hashes: undefined };

/** How long purgeShipped waits for the shipper to move the sealed segment to ClickHouse. */
const PURGE_SHIP_TIMEOUT_MS = 30_000;

/**
 * Embedded ingestion (no Redis): an event is acknowledged once it is durable in the local ingest
 * log (an O_DSYNC write: on disk when it returns), and a shipper moves the log to ClickHouse in
 * large inserts.
 *
 * Group commit: the requests read in one event-loop turn become one frame, one write on libuv's
 * pool; while that runs, the next requests gather for the next frame. Every request is answered
 * when the write holding it completes.
 *
 * A client eventId is idempotent (ClientIdIndex): a retry is answered with the event first
 * accepted, and not appended again.
 */
export class LogEventSink implements EventSink {
  readonly #batcher: MicroBatcher<Append, number>;
  /** Bytes of requests on their way into the log (reserved against the bound). */
  #reserved = 0;
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #visibility: Histogram | undefined;

  private constructor(
    private readonly log: SegmentLog,
    private readonly index: ClientIdIndex,
    private readonly shipper: Shipper,
    private readonly options: LogSinkOptions,
  ) {
    this.#batcher = new MicroBatcher<Append, number>({
      // One frame per event-loop turn; frames grow while the previous write runs.
      maxItems: 100_000,
      maxDelayMs: 0,
      maxConcurrentFlushes: 1,
      flush: async (items) => {
        // A seal runs in the same lane as the appends: the log takes one writer at a time.
        if (items.includes(SEAL)) await this.log.seal();
        const appends = items.filter((item) => item !== SEAL);
        if (appends.length === 0) return this.log.end;
        let count = 0;
        for (const append of appends) count += append.count;
        return this.log.append(
          appends.map((append) => append.bytes),
          count,
        );
      },
    });
    this.#visibility = options.telemetry
      ? new Histogram({
          name: 'feedback_ingest_log_visibility_seconds',
          help: 'From an event made durable in the ingest log (acknowledged) to its insert into ClickHouse completing',
          buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
          registers: [options.telemetry.registry],
        })
      : undefined;
    if (options.telemetry) {
      const sink = this;
      new Gauge({
        name: 'feedback_ingest_log_unshipped_bytes',
        help: 'Bytes of acknowledged events in the local ingest log not yet in ClickHouse (503 at INGEST_LOG_MAX_BYTES)',
        registers: [options.telemetry.registry],
        collect() {
          this.set(sink.unshippedBytes);
        },
      });
      new Gauge({
        name: 'feedback_ingest_log_failed_inserts',
        help: 'Consecutive failed inserts of the ingest log shipper (0 while ClickHouse takes them)',
        registers: [options.telemetry.registry],
        collect() {
          this.set(shipper.failures);
        },
      });
    }
  }

  /** Opens (and recovers) the log under `options.dir`; shipping starts with start(). */
  static async open(options: LogSinkOptions): Promise<LogEventSink> {
    const store = new CheckpointStore(options.dir);
    const checkpoint = await store.load();
    const { log, report } = await SegmentLog.open(path.join(options.dir, 'segments'), {
      segmentBytes: segmentBytesFor(options.maxBytes),
      shippedThrough: checkpoint.shipped,
    });
    if (checkpoint.shipped < log.start) checkpoint.shipped = log.start;
    const index = await ClientIdIndex.open(path.join(options.dir, 'client-ids'), blocksPerBucket(options.idsPerSecond ?? 1000));
    // Client eventIds waiting in the log answer their retries from memory, as before the restart.
    let events = 0;
    for (let position = checkpoint.shipping?.from ?? checkpoint.shipped; position < log.end; ) {
      const { frames, end } = await log.read(position, 8 * 1024 * 1024);
      if (frames.length === 0) break;
      for (const frame of frames) {
        events += frame.count;
        for (const document of payloadDocuments(frame.payload)) {
          // A cheap filter first (most events carry server ids); properties may match it too.
          if (!document.includes('"id_from_client":true')) continue;
          const event = eventFromLogLine(document);
          if (!event.id_from_client) continue;
          if (!index.claim(event.project_id, event.event_id))
            index.setClaim(event.project_id, event.event_id, { json: document, group: REBUILT, slot: -1 });
        }
      }
      position = end;
    }
    const logger = options.logger.child({ component: 'ingest-log' });
    const level = report.damage.length > 0 ? 'error' : 'info';
    logger[level](
      { ...report, unshippedBytes: log.end - checkpoint.shipped, unshippedEvents: events, reshipRange: checkpoint.shipping },
      report.damage.length > 0 ? 'ingest log opened with damage' : 'ingest log opened',
    );
    let sink: LogEventSink | undefined;
    const shipper = new Shipper(
      { log, store, checkpoint, index, writer: options.writer, logger, onShipped: (batch) => sink?.observeShipped(batch) },
      { ...DEFAULT_SHIPPER, ...options.shipper },
    );
    sink = new LogEventSink(log, index, shipper, options);
    return sink;
  }

  /** Starts shipping to ClickHouse; call once its schema is migrated. */
  start(): void {
    this.shipper.start();
  }

  /** Bytes of events in the log not yet in ClickHouse. */
  get unshippedBytes(): number {
    return this.log.end - this.shipper.shipped;
  }

  async submit(events: IngestEvent[]): Promise<IngestEvent[]> {
    if (this.#closed) throw new SinkUnavailableError('shutting down');
    // One pass over the request's client eventIds: the claims already held are looked up, every
    // other id hashed once (into one array for the request, kept with its claims for the
    // shipper). Only a retried eventId that may have been shipped asks ClickHouse; every other
    // request goes on without an await here.
    let hashes: Uint32Array | undefined;
    const candidates: IngestEvent[] = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as IngestEvent;
      if (!event.id_from_client || this.index.claim(event.project_id, event.event_id)) continue;
      hashes ??= new Uint32Array(events.length * 2);
      idHashOf(event.project_id, event.event_id, hashes, 2 * i);
      if (this.index.maybeShipped(hashes[2 * i] as number, hashes[2 * i + 1] as number)) candidates.push(event);
    }
    const stored = candidates.length === 0 ? undefined : await this.#storedRetries(candidates);

    // From here to the reservation nothing awaits, so claims cannot race (after the lookup above
    // they are read again, and the ids claimed now hashed again: a claim seen before it may have
    // been released since).
    let resolveDurable!: () => void;
    let rejectDurable!: (error: unknown) => void;
    const durable = new Promise<void>((resolve, reject) => {
      resolveDurable = resolve;
      rejectDurable = reject;
    });
    durable.catch(() => undefined); // observed by whoever waits on it; never unhandled
    const group: ClaimGroup = { durable, hashes };
    const answer: IngestEvent[] = new Array(events.length);
    const documents: string[] = [];
    const claimed: Claim[] = [];
    const others: Promise<unknown>[] = [];
    for (let i = 0; i < events.length; i++) {
      const event = events[i] as IngestEvent;
      if (!event.id_from_client) {
        documents.push(logLine(event));
        answer[i] = event;
        continue;
      }
      const claim = this.index.claim(event.project_id, event.event_id);
      if (claim) {
        // A retry of an event in the log (or a repeat within this request): answered with the
        // first, once that one is durable.
        answer[i] = eventFromLogLine(claim.json);
        if (claim.group !== group) others.push(claim.group.durable);
        continue;
      }
      const found = stored?.get(eventKey(event.project_id, event.event_id));
      if (found) {
        answer[i] = found;
        continue;
      }
      if (stored !== undefined) {
        group.hashes ??= new Uint32Array(events.length * 2);
        idHashOf(event.project_id, event.event_id, group.hashes, 2 * i);
      }
      const json = logLine(event);
      const mine: Claim = { json, group, slot: i };
      this.index.setClaim(event.project_id, event.event_id, mine);
      claimed.push(mine);
      documents.push(json);
      answer[i] = event;
    }
    const release = (error: unknown) => {
      for (const claim of claimed) {
        const event = events[claim.slot] as IngestEvent;
        this.index.releaseClaim(event.project_id, event.event_id, claim);
      }
      rejectDurable(error);
    };
    if (others.length > 0) {
      // Retries of events still on their way into the log: if that write fails, this request
      // fails too, and before writing anything of its own, so a 503 never leaves events stored.
      try {
        await Promise.all(others);
      } catch (error) {
        release(error);
        throw error;
      }
    }
    if (documents.length > 0) {
      const bytes = Buffer.from(documents.join(''));
      if (this.unshippedBytes + this.#reserved + bytes.length + FRAME_HEADER_BYTES > this.options.maxBytes) {
        const error = new LogFullError(
          `ingest log full (${this.unshippedBytes} bytes not yet in ClickHouse, INGEST_LOG_MAX_BYTES ${this.options.maxBytes})`,
        );
        release(error);
        throw error;
      }
      this.#reserved += bytes.length;
      try {
        await this.#batcher.add([{ bytes, count: documents.length }]);
      } catch (error) {
        release(error);
        throw error;
      } finally {
        this.#reserved -= bytes.length;
      }
      resolveDurable();
      this.shipper.notify();
    } else {
      resolveDurable();
    }
    return answer;
  }

  /**
   * The stored events of client eventIds that were probably shipped already (their hash is in
   * the index): the only case where a request asks ClickHouse. Retries are rare; a new eventId
   * never gets here.
   */
  async #storedRetries(candidates: IngestEvent[]): Promise<Map<string, IngestEvent>> {
    const stored = new Map<string, IngestEvent>();
    let found: IngestEvent[];
    try {
      found = await findStoredEvents(
        this.options.clickhouse,
        [...new Set(candidates.map((event) => event.project_id))],
        [...new Set(candidates.map((event) => event.event_id))],
        ID_LOOKBACK_MS,
      );
    } catch (error) {
      throw new SinkUnavailableError('a retried eventId cannot be checked while ClickHouse is unavailable', { cause: error });
    }
    for (const event of found) stored.set(eventKey(event.project_id, event.event_id), event);
    return stored;
  }

  /**
   * Whether every event acknowledged before `before` is in ClickHouse: nothing is left to ship, or
   * the first frame not yet shipped was appended after `before` (frames are appended in time order).
   */
  async settledBefore(before: Date): Promise<boolean> {
    const shipped = this.shipper.shipped;
    if (shipped >= this.log.end) return true;
    const { frames } = await this.log.read(shipped, FRAME_HEADER_BYTES);
    const first = frames[0];
    return first === undefined || first.appendedAt > before.getTime();
  }

  /**
   * Removes from disk every segment whose events are in ClickHouse, the one being written
   * included: it is sealed (the next frame starts a new segment), shipped, then removed. An
   * erasure calls this once the user's events are deleted from ClickHouse, so their raw copies
   * in the log go too. Rejects when the shipper has not caught up within 30 s (ClickHouse down);
   * the erasure step is then retried.
   */
  async purgeShipped(): Promise<void> {
    if (this.#closed) throw new SinkUnavailableError('shutting down');
    const sealedAt = await this.#batcher.add([SEAL]);
    this.shipper.notify();
    const deadline = Date.now() + PURGE_SHIP_TIMEOUT_MS;
    while (this.shipper.shipped < sealedAt) {
      if (Date.now() > deadline) throw new SinkUnavailableError(`the ingest log has not shipped up to ${sealedAt} within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.log.removeBefore(this.shipper.shipped);
  }

  /** Records, per event of a shipped batch, how long it took from acknowledged to inserted. */
  observeShipped(batch: ShippedBatch): void {
    if (!this.#visibility) return;
    for (const frame of batch.frames) {
      const seconds = Math.max(0, (batch.shippedAt - frame.appendedAt) / 1000);
      for (let i = 0; i < frame.count; i++) this.#visibility.observe(seconds);
    }
  }

  /**
   * Refuses new events, writes what is buffered, ships what it can within the shutdown bound,
   * and leaves the rest in the log for the next start.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.#batcher.drain();
      await this.shipper.stop(this.options.shutdownShipMs);
      await this.log.close();
    })();
    return this.#closing;
  }
}
