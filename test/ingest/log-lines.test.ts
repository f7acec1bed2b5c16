import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IngestEvent } from '../../src/core/event.js';
import type { Frame } from '../../src/ingest/log/frame.js';
import { eventFromLogLine, logBatch, logLine } from '../../src/ingest/log/log-lines.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * The embedded log holds each event as the JSONEachRow line of its insert (issue 31, "bytes
 * through"), and its shipper inserts ranges of those lines as they are. These tests hold the
 * lines to the rows insertEvents stores, and the range reader to the lines' ids.
 */
describe('the ingest log’s row lines', () => {
  const server = useTestServer();
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server);
  });

  function events(count: number, fromClient: (i: number) => boolean): IngestEvent[] {
    const now = Date.now();
    const shapes: (Record<string, unknown> | null)[] = [
      null,
      {},
      { screen: 'home', n: 3, nested: { a: [1, 'two', null, true] } },
      { quote: 'say "hi"\n\ttab \\ back', emoji: '😀 é', '': 'empty key' },
    ];
    return Array.from({ length: count }, (_, i) => ({
      project_id: project.id,
      event_id: fromClient(i) ? randomUUID() : uuidv7(),
      event_name: i % 3 === 0 ? 'feedback_list' : `custom "${i}" ü`,
      user_id: `user-${i % 7}\\`,
      properties: shapes[i % shapes.length] ?? null,
      created_at: new Date(now - i * 1000).toISOString(),
      received_at: new Date(now).toISOString(),
      id_from_client: fromClient(i),
    }));
  }

  function frameOf(lines: string[], position = 0): Frame {
    const payload = Buffer.from(lines.join(''));
    return { position, appendedAt: Date.now(), count: lines.length, payload, bytes: payload.length + 28 };
  }

  type Row = { event_name: string; user_id: string; properties_raw: string; properties: string; created_at: string; received_at: string };
  async function rows(ids: string[]): Promise<Row[]> {
    return server.clickhouseRows<Row>(
      `SELECT event_name, user_id, properties_raw, toJSONString(properties) AS properties,
              toString(created_at) AS created_at, toString(received_at) AS received_at
       FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)} ORDER BY created_at, event_name`,
      { p: project.id, ids },
    );
  }

  it('a line reads back as its event, in both forms the log has held', () => {
    for (const event of events(8, (i) => i % 2 === 0)) {
      expect(eventFromLogLine(logLine(event))).toEqual(event);
      // A log written before row lines held the event's own JSON.
      expect(eventFromLogLine(JSON.stringify(event))).toEqual(event);
    }
  });

  it('a range of row lines goes as its bytes, with the ids of its client eventIds; an older frame makes it go parsed', () => {
    const sent = events(10, (i) => i % 3 !== 1);
    const frames = [frameOf(sent.slice(0, 4).map(logLine)), frameOf(sent.slice(4).map(logLine), 1000)];
    const batch = logBatch(frames);
    expect(batch.count).toBe(10);
    expect(batch.rows?.lines).toEqual(frames.map((frame) => frame.payload));
    const clients = sent.filter((event) => event.id_from_client);
    expect(batch.rows?.clientIds).toEqual(clients.map((event) => ({ projectId: event.project_id, eventId: event.event_id })));
    expect(batch.clientIds).toEqual(clients.map((event) => ({ projectId: event.project_id, eventId: event.event_id })));

    const older = logBatch([
      frames[0] as Frame,
      frameOf(
        sent.slice(4).map((event) => `${JSON.stringify(event)}\n`),
        1000,
      ),
    ]);
    expect(older.rows).toBeUndefined();
    expect(older.events).toEqual(sent);
    expect(older.clientIds).toEqual(batch.clientIds);
  });

  it('row lines inserted as they are store the very rows insertEvents stores', async () => {
    const viaEvents = events(12, (i) => i % 2 === 0);
    const viaLines = viaEvents.map((event) => ({ ...event, event_id: event.id_from_client ? randomUUID() : uuidv7() }));
    await server.services.eventWriter.write(viaEvents, `log-lines:events:${randomUUID()}`);
    const batch = logBatch([frameOf(viaLines.map(logLine))]);
    expect(batch.rows).toBeDefined();
    const result = await server.services.eventWriter.writeRowLines(
      batch.rows as NonNullable<typeof batch.rows>,
      `log-lines:rows:${randomUUID()}`,
    );
    // Inserted as bytes: the parsed path would have listed every client eventId it checked.
    expect(result).toMatchObject({ inserted: 12, deadLettered: 0 });
    expect(result.stored.size).toBe(0);
    const stored = await rows(viaLines.map((event) => event.event_id));
    expect(stored).toHaveLength(12);
    expect(stored).toEqual(await rows(viaEvents.map((event) => event.event_id)));

    // The same lines again: their client eventIds are found stored, so the range goes parsed and
    // those are dropped (server ids are looked for only with checkAll, as in write()).
    const again = await server.services.eventWriter.writeRowLines(
      batch.rows as NonNullable<typeof batch.rows>,
      `log-lines:rows:${randomUUID()}`,
    );
    expect(again.inserted).toBe(6);
    expect(again.stored.size).toBe(6);
  });
});
