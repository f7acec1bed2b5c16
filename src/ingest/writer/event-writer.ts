import { uuidv7 } from 'uuidv7';
import { eventKey, type IngestEvent } from '../../core/event.js';
import { observeInsert, type Telemetry } from '../../core/telemetry.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import {
  eventFromRowLine,
  findEventsAsWritten,
  findStoredEvents,
  indexedEventKeys,
  insertEventIndexRows,
  insertEventRowLines,
  insertEvents,
} from '../../olap/tables/events.table.js';
import { repairUserOrderedCopy } from '../../olap/tables/events-by-user.table.js';
import { insertDataError } from '../../olap/tables/insert-errors.js';
import { rebuildRollups, rollupMismatches } from '../../olap/tables/rollups.js';
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
  /** What a re-run found cut short by a crash and made whole again (RepairReport). */
  repaired?: RepairReport;
};

/** The dependents of events a re-run found short and rebuilt. */
export type RepairReport = { indexRows: number; rollupDays: number; userOrderedRows: number };

export type WriteOptions = {
  /**
   * The batch may have been written before, exactly as it is (a queue job run again after a crash
   * or a lost answer), by an earlier insert under another token. Every event is then looked up
   * in events by its own created_at, and what that earlier insert stored is not written again.
   *
   * That insert may have been cut by the crash: ClickHouse commits the part of events and the
   * parts its materialized views write (the event_ids index, the user-ordered copy, the daily and
   * hourly rollups) one after the other, with nothing binding them (ClickHouse issue 104661). So
   * the dependents of the events found are checked and made whole: missing index rows and rows of
   * the user-ordered copy are added, and rollup days that differ from the events are rebuilt.
   */
  checkAll?: boolean;
};

/**
 * Events as the embedded log holds them: JSONEachRow row lines of the insert (eventRowLine), each
 * ending with a newline, in buffers that may hold many lines; `count` lines in all, and the
 * project and id of every event whose id came from the client (the ones checked for duplicates).
 */
export type RowLines = { lines: Buffer[]; count: number; clientIds: { projectId: string; eventId: string }[] };

export type EventWriterOptions = {
  /** The rollup rebuild needs a single server; on a cluster a re-run only repairs the index. */
  cluster?: string | undefined;
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
    private readonly options: EventWriterOptions = {},
  ) {}

  async write(events: IngestEvent[], token: string, options: WriteOptions = {}): Promise<WriteResult> {
    const checked = (event: IngestEvent) => options.checkAll === true || event.id_from_client;
    const clientIds = events.filter((event) => event.id_from_client);
    const stored = new Map<string, IngestEvent>();
    if (clientIds.length > 0) {
      const existing = await findStoredEvents(
        this.clickhouse,
        [...new Set(clientIds.map((event) => event.project_id))],
        [...new Set(clientIds.map((event) => event.event_id))],
        ID_LOOKBACK_MS,
      );
      for (const event of existing) stored.set(eventKey(event.project_id, event.event_id), event);
    }
    let repaired: RepairReport | undefined;
    if (options.checkAll === true) {
      const asWritten = await findEventsAsWritten(this.clickhouse, events);
      for (const event of asWritten) {
        const key = eventKey(event.project_id, event.event_id);
        if (!stored.has(key)) stored.set(key, event);
      }
      if (asWritten.length > 0) repaired = await this.repairDependents(asWritten);
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
    return { inserted: fresh.length - refused.length, deadLettered: refused.length, stored, ...(repaired ? { repaired } : {}) };
  }

  /**
   * write() for events as the embedded log holds them. The usual case, a range taken for the
   * first time whose client eventIds are not stored yet, is inserted as the bytes it is: no parse,
   * no re-encode (issue 31). Anything else takes write()'s own path over the parsed events, with
   * the same token, so retries and repairs behave exactly as before: a range that may have landed
   * (`checkAll`), a client eventId already stored, rows ClickHouse refuses for their data (refused
   * whole, nothing of the insert is stored, then isolated). `stored` is filled only on that path.
   */
  async writeRowLines(batch: RowLines, token: string, options: WriteOptions = {}): Promise<WriteResult> {
    if (options.checkAll !== true && !(await this.anyStored(batch.clientIds))) {
      try {
        await observeInsert(this.telemetry, 'events', batch.count, () => insertEventRowLines(this.clickhouse, batch.lines, token));
        return { inserted: batch.count, deadLettered: 0, stored: new Map() };
      } catch (error) {
        if (!insertDataError(error)) throw error;
      }
    }
    return this.write(parseRowLines(batch.lines), token, options);
  }

  /** Whether any of these client eventIds is stored within the idempotency window. */
  private async anyStored(ids: { projectId: string; eventId: string }[]): Promise<boolean> {
    if (ids.length === 0) return false;
    const projects = new Set<string>();
    const eventIds = new Set<string>();
    for (const id of ids) {
      projects.add(id.projectId);
      eventIds.add(id.eventId);
    }
    const found = await findStoredEvents(this.clickhouse, [...projects], [...eventIds], ID_LOOKBACK_MS);
    const wanted = new Set(ids.map((id) => eventKey(id.projectId, id.eventId)));
    return found.some((event) => wanted.has(eventKey(event.project_id, event.event_id)));
  }

  /**
   * Makes the dependents of stored events whole after an insert that may have been cut between
   * its parts: the index rows and user-ordered rows they lack are added, and each of their (project, UTC day) rollups
   * that differs from the events is rebuilt. Safe to repeat; a no-op when nothing was cut.
   */
  private async repairDependents(found: IngestEvent[]): Promise<RepairReport> {
    const indexed = await indexedEventKeys(this.clickhouse, found);
    const unindexed = found.filter((event) => !indexed.has(eventKey(event.project_id, event.event_id)));
    await insertEventIndexRows(this.clickhouse, unindexed, `event-ids:repair:${uuidv7()}`);
    const userOrderedRows = await repairUserOrderedCopy(this.clickhouse, found, `events-by-user:repair:${uuidv7()}`);
    let rollupDays = 0;
    if (this.options.cluster === undefined) {
      const target = { client: this.clickhouse };
      for (const [projectId, days] of daysByProject(found)) {
        if ((await rollupMismatches(target, projectId, days)) === 0) continue;
        await rebuildRollups(target, projectId, days);
        rollupDays += days.length;
      }
    }
    return { indexRows: unindexed.length, rollupDays, userOrderedRows };
  }
}

/** The UTC days (YYYY-MM-DD) of the events' created_at, per project. */
function daysByProject(events: IngestEvent[]): Map<string, string[]> {
  const days = new Map<string, Set<string>>();
  for (const event of events) {
    const day = new Date(event.created_at).toISOString().slice(0, 10);
    const ofProject = days.get(event.project_id) ?? new Set<string>();
    ofProject.add(day);
    days.set(event.project_id, ofProject);
  }
  return new Map([...days].map(([projectId, set]) => [projectId, [...set]]));
}

/** The events of row lines (eventRowLine), in order. */
function parseRowLines(buffers: Buffer[]): IngestEvent[] {
  const events: IngestEvent[] = [];
  for (const buffer of buffers) {
    let start = 0;
    for (let newline = buffer.indexOf(10, start); newline >= 0; newline = buffer.indexOf(10, start)) {
      events.push(eventFromRowLine(buffer.toString('utf8', start, newline)));
      start = newline + 1;
    }
  }
  return events;
}
