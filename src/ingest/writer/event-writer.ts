import { eventKey, type IngestEvent } from '../../core/event.js';
import { observeInsert, type Telemetry } from '../../core/telemetry.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { findStoredEvents, insertEvents } from '../../olap/tables/events.table.js';
import { ID_LOOKBACK_MS } from '../id-filter.js';
import { type DeadLetterStore, deadLetter } from './dead-letters.js';
import { insertIsolating } from './isolating-insert.js';

export type WriteResult = {
  /** Events inserted by this call (dead-lettered ones not counted). */
  inserted: number;
  /** Events ClickHouse refused for their data, now in the dead letters. */
  deadLettered: number;
  /** For every event checked against the table: the event as stored (by this or an earlier write). */
  stored: Map<string, IngestEvent>;
};

export type WriteOptions = {
  /**
   * Check every event, not only client eventIds, against what is stored: for a batch that may
   * have been written before (a queue job run again after a crash or a lost answer), whose rows
   * an earlier insert under another token may already hold.
   */
  checkAll?: boolean;
};

/**
 * The one path by which events reach ClickHouse, used by the BullMQ worker and by the
 * embedded ingest log's shipper alike. Events already stored within the idempotency window (a
 * retried client eventId, or with `checkAll` any event of a batch written before) or repeated
 * within the batch are dropped, so each is stored once; the rest go in one insert whose deduplication token makes a retry of
 * the same batch harmless.
 *
 * One bad event never blocks the others: when ClickHouse refuses the insert for its data, the
 * batch is split until the refused events are found (insertIsolating); they go to the dead
 * letters, every other event is stored. The write resolves only once both are durable; an
 * engine failure, or dead letters that cannot be recorded, reject it so the caller retries.
 */
export class EventWriter {
  constructor(
    private readonly clickhouse: ClickHouseClient,
    private readonly deadLetters: DeadLetterStore,
    private readonly telemetry?: Telemetry,
  ) {}

  async write(events: IngestEvent[], token: string, options: WriteOptions = {}): Promise<WriteResult> {
    const checked = (event: IngestEvent) => options.checkAll === true || event.id_from_client;
    const toCheck = events.filter(checked);
    const stored = new Map<string, IngestEvent>();
    if (toCheck.length > 0) {
      const existing = await findStoredEvents(
        this.clickhouse,
        [...new Set(toCheck.map((event) => event.project_id))],
        [...new Set(toCheck.map((event) => event.event_id))],
        ID_LOOKBACK_MS,
      );
      for (const event of existing) stored.set(eventKey(event.project_id, event.event_id), event);
    }
    const fresh: IngestEvent[] = [];
    for (const event of events) {
      if (!checked(event)) {
        fresh.push(event);
        continue;
      }
      const key = eventKey(event.project_id, event.event_id);
      if (stored.has(key)) continue;
      stored.set(key, event);
      fresh.push(event);
    }
    const refused = await insertIsolating(fresh, token, (rows, rowsToken) =>
      observeInsert(this.telemetry, 'events', rows.length, () => insertEvents(this.clickhouse, rows, rowsToken)),
    );
    await this.deadLetters.record(
      refused.map(({ row, error }) => deadLetter('event', row.project_id, eventKey(row.project_id, row.event_id), row, error)),
    );
    return { inserted: fresh.length - refused.length, deadLettered: refused.length, stored };
  }
}
