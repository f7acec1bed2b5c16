import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type ClickHouseClient, createClient } from '@clickhouse/client';
import {
  type ConnBaseQueryParams,
  type ConnCommandResult,
  type ConnExecParams,
  type ConnExecResult,
  type Connection,
  type ConnInsertParams,
  type ConnInsertResult,
  type ConnPingParams,
  type ConnPingResult,
  type ConnQueryResult,
  createChdbConnection,
} from 'chdb/connection';

import { isolateChdbResults } from '../../src/olap/chdb-result-isolation.js';
import { scopeChdbSettings } from '../../src/olap/chdb-settings-scope.js';

type ClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection'];

/**
 * What an insert does while faults are on:
 * - `refuse`: throws without reaching ClickHouse (the server is down, the request never arrives);
 * - `lose-answer`: the insert really happens, then throws (the answer was lost on the way back),
 *   so a retry of the same batch must be dropped by its deduplication token;
 * - `cut-views` (events only): the insert really happens, then the rows its materialized views
 *   wrote (event_ids, events_by_user, events_daily, events_hourly) are deleted, then it throws: a crash between
 *   the insert's parts (ClickHouse commits them one after the other, ClickHouse issue 104661).
 */
export type InsertFault = 'refuse' | 'lose-answer' | 'cut-views';

export type FaultSwitch = {
  /** undefined: inserts pass through untouched. */
  mode: InsertFault | undefined;
  /** Insert attempts per table (every attempt, failing or not). */
  attempts: Map<string, number>;
  /** Insert attempts that this wrapper made fail, per table. */
  failures: Map<string, number>;
  attemptsOf(table: string): number;
  failuresOf(table: string): number;
};

/** The table of an `INSERT INTO <table> ...` statement as @clickhouse/client sends it. */
function insertTable(query: string): string {
  const match = /INSERT\s+INTO\s+`?(?:\w+`?\.`?)?(\w+)`?/i.exec(query);
  return match?.[1] ?? '?';
}

/**
 * A real chDB connection on `<dataDir>/clickhouse` whose `insert` fails on command; every other
 * method is the real one. Plugged into @clickhouse/client exactly as src/olap/clickhouse.ts plugs
 * its connection (wrapped for result isolation the same way), so the app sees an ordinary ClickHouseClient.
 */
export function createFaultyClickHouse(dataDir: string): { client: ClickHouseClient; faults: FaultSwitch } {
  const dir = path.join(dataDir, 'clickhouse');
  mkdirSync(dir, { recursive: true });
  // The service's own connection stack (result isolation included), with the faults on top.
  const real = isolateChdbResults(scopeChdbSettings(createChdbConnection({ path: dir }) as unknown as Connection<Readable>));
  const faults: FaultSwitch = {
    mode: undefined,
    attempts: new Map(),
    failures: new Map(),
    attemptsOf: (table) => faults.attempts.get(table) ?? 0,
    failuresOf: (table) => faults.failures.get(table) ?? 0,
  };

  const wrapper: Connection<Readable> = {
    ping: (params: ConnPingParams): Promise<ConnPingResult> => real.ping(params),
    query: (params: ConnBaseQueryParams): Promise<ConnQueryResult<Readable>> => real.query(params),
    command: (params: ConnBaseQueryParams): Promise<ConnCommandResult> => real.command(params),
    // An exec with values is an insert too (the embedded log's row lines go that way): the same faults.
    exec: (params: ConnExecParams<Readable>): Promise<ConnExecResult<Readable>> =>
      params.values === undefined
        ? real.exec(params)
        : faultyInsert(params, (values) =>
            real.exec({ ...params, values: typeof values === 'string' ? Readable.from([values], { objectMode: false }) : values }),
          ),
    close: () => real.close(),
    insert: (params: ConnInsertParams<Readable>): Promise<ConnInsertResult> =>
      faultyInsert(params, (values) => real.insert({ ...params, values })),
  };

  async function faultyInsert<Result>(
    params: { query: string; values?: Readable | string | undefined },
    run: (values: Readable | string) => Promise<Result>,
  ): Promise<Result> {
    const table = insertTable(params.query);
    faults.attempts.set(table, faults.attemptsOf(table) + 1);
    const mode = faults.mode;
    if (mode === 'refuse') {
      faults.failures.set(table, faults.failuresOf(table) + 1);
      // Leave the values stream consumed, as a failed request would.
      if (params.values !== undefined && typeof params.values !== 'string') params.values.resume();
      throw new Error(`injected fault: insert into ${table} refused`);
    }
    const values = params.values ?? '';
    const body = mode === 'cut-views' && typeof values !== 'string' ? await text(values) : values;
    const result = await run(body);
    if (mode === 'cut-views' && table === 'events') {
      await cutViews(real, typeof body === 'string' ? body : '');
      faults.failures.set(table, faults.failuresOf(table) + 1);
      throw new Error('injected fault: the insert into events was cut before its views');
    }
    if (mode === 'lose-answer') {
      faults.failures.set(table, faults.failuresOf(table) + 1);
      throw new Error(`injected fault: answer of the insert into ${table} lost`);
    }
    return result;
  }

  const client = createClient({
    connection: wrapper as unknown as ClientConnection,
    clickhouse_settings: { date_time_input_format: 'best_effort' },
  });
  return { client, faults };
}

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

/** Deletes what the views of events wrote for the rows of a JSONEachRow insert body. */
async function cutViews(connection: Connection<Readable>, body: string): Promise<void> {
  const rows = body
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { project_id: string; event_id: string });
  const projects = [...new Set(rows.map((row) => row.project_id))];
  const settings = { mutations_sync: '2' };
  await connection.command({
    query: 'ALTER TABLE event_ids DELETE WHERE event_id IN {ids:Array(UUID)}',
    query_params: { ids: rows.map((row) => row.event_id) },
    clickhouse_settings: settings,
  });
  for (const table of ['events_by_user', 'events_daily', 'events_hourly']) {
    await connection.command({
      query: `ALTER TABLE ${table} DELETE WHERE project_id IN {p:Array(UUID)}`,
      query_params: { p: projects },
      clickhouse_settings: settings,
    });
  }
}
