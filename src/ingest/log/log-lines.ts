import type { IngestEvent } from '../../core/event.js';
import { eventFromRowLine, eventRowLine } from '../../olap/tables/events.table.js';
import type { RowLines } from '../writer/event-writer.js';
import type { ClientId } from './client-ids.js';
import { type Frame, payloadDocuments } from './frame.js';

/**
 * What the embedded log holds for each event: the JSONEachRow line of the insert into `events`
 * (eventRowLine), written once at acknowledgement, so the shipper inserts ranges of the log as the
 * bytes they are (issue 31). Logs written before held the event's own JSON (IngestEvent); those
 * lines are still read, parsed as before, so an upgrade ships what an older version acknowledged.
 */
export const logLine = eventRowLine;

/** `{"project_id":"<36-character UUID>","created_at":"`: how every row line begins. */
const ROW_PROJECT_END = 51;
const ROW_AFTER_PROJECT = '","created_at":"';
const ROW_TAIL_CLIENT = 'true}';

/** Whether a line is a row line (eventRowLine) rather than an older log's IngestEvent JSON. */
function isRowLine(line: string): boolean {
  return line.startsWith('{"project_id":"') && line.startsWith(ROW_AFTER_PROJECT, ROW_PROJECT_END);
}

/** The event of one log line, in either form. */
export function eventFromLogLine(line: string): IngestEvent {
  return isRowLine(line) ? eventFromRowLine(line.trimEnd()) : (JSON.parse(line) as IngestEvent);
}

/** A range of the log read for one insert: as row lines when every frame holds them, else parsed. */
export type LogBatch = {
  count: number;
  /** Its client eventIds, recorded as shipped once it is stored. */
  clientIds: ClientId[];
} & ({ rows: RowLines; events?: undefined } | { rows?: undefined; events: IngestEvent[] });

/** A line's last characters when its event's id came from the client (`…,"id_from_client":true}`). */
const TAIL_CLIENT = Buffer.from(ROW_TAIL_CLIENT, 'latin1');

/** Whether the line from `start` to `end` ends as a client eventId's does: read in place, no string per line. */
function endsWithTail(payload: Buffer, start: number, end: number): boolean {
  if (end - start < TAIL_CLIENT.length) return false;
  for (let i = 1; i <= TAIL_CLIENT.length; i++) {
    if (payload[end - i] !== TAIL_CLIENT[TAIL_CLIENT.length - i]) return false;
  }
  return true;
}

/**
 * The insert of a range of frames. Frames of row lines are passed on as they are (their payloads
 * are views of the bytes read); only each line's end and, for a client eventId, its two ids are
 * looked at. A frame from an older log makes the range go parsed, as before.
 */
export function logBatch(frames: Frame[]): LogBatch {
  let count = 0;
  for (const frame of frames) count += frame.count;
  if (!frames.every((frame) => frame.payload.length === 0 || isRowPayload(frame.payload))) {
    const events: IngestEvent[] = [];
    for (const frame of frames) for (const line of payloadDocuments(frame.payload)) events.push(eventFromLogLine(line));
    const clientIds = events
      .filter((event) => event.id_from_client)
      .map((event) => ({ projectId: event.project_id, eventId: event.event_id }));
    return { count: events.length, clientIds, events };
  }
  const clientIds: ClientId[] = [];
  const lines: Buffer[] = [];
  for (const { payload } of frames) {
    lines.push(payload);
    let start = 0;
    for (let newline = payload.indexOf(10, start); newline >= 0; newline = payload.indexOf(10, start)) {
      if (endsWithTail(payload, start, newline)) {
        const projectId = payload.toString('latin1', start + 15, start + ROW_PROJECT_END);
        const at = payload.indexOf('"event_id":"', start + ROW_PROJECT_END) + 12;
        const eventId = payload.toString('latin1', at, at + 36);
        clientIds.push({ projectId, eventId });
      }
      start = newline + 1;
    }
  }
  return { count, clientIds, rows: { lines, count, clientIds } };
}

/** Whether a frame's payload holds row lines (a frame is written by one version of the service). */
function isRowPayload(payload: Buffer): boolean {
  return isRowLine(payload.toString('latin1', 0, ROW_PROJECT_END + ROW_AFTER_PROJECT.length));
}
