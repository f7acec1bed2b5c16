import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { insertEvents } from '../../src/olap/tables/events.table.js';
import { useEmbeddedClickHouse } from '../helpers/embedded-clickhouse.js';

/*
 * Embedded ClickHouse (chDB): a request's clickhouse_settings apply to that request only
 * (src/olap/chdb-settings-scope.ts). chDB's adapter SETs them on its long-lived session, where
 * they stayed for every later query.
 */
describe('chDB request settings', () => {
  const chdb = useEmbeddedClickHouse('chdb-settings');

  const current = async (names: string[]) => {
    const result = await chdb.clickhouse.query({
      query: `SELECT ${names.map((_, i) => `toString(getSetting({n${i}:String})) AS s${i}`).join(', ')}`,
      query_params: Object.fromEntries(names.map((name, i) => [`n${i}`, name])),
      format: 'JSONEachRow',
    });
    const [row] = await result.json<Record<string, string>>();
    return names.map((_, i) => row?.[`s${i}`]);
  };

  it('a setting of one request is not in force for the next, whichever kind of request set it', async () => {
    const before = await current(['insert_deduplication_token', 'max_execution_time', 'output_format_json_quote_64bit_integers']);
    await chdb.clickhouse.command({
      query: 'SELECT 1',
      clickhouse_settings: { insert_deduplication_token: 'leak', max_execution_time: 7 },
    });
    expect(await current(['insert_deduplication_token', 'max_execution_time'])).toEqual(before.slice(0, 2));
    await chdb.clickhouse.query({
      query: 'SELECT 1',
      format: 'JSONEachRow',
      clickhouse_settings: { output_format_json_quote_64bit_integers: 1 },
    });
    expect(await current(['output_format_json_quote_64bit_integers'])).toEqual(before.slice(2));
    // And a request's own settings still apply to it.
    const result = await chdb.clickhouse.query({
      query: "SELECT getSetting('max_execution_time') AS m",
      format: 'JSONEachRow',
      clickhouse_settings: { max_execution_time: 9 },
    });
    expect(await result.json()).toEqual([{ m: 9 }]);
  });

  it('an insert without a token of its own stores every row after one with a token', async () => {
    const projectId = randomUUID();
    const now = new Date().toISOString();
    await insertEvents(
      chdb.clickhouse,
      [
        {
          project_id: projectId,
          event_id: randomUUID(),
          event_name: 'first',
          user_id: 'u',
          properties: null,
          created_at: now,
          received_at: now,
          id_from_client: false,
        },
      ],
      `test:${randomUUID()}`,
    );
    // Before the fix the token above was still set, and this insert's one block was dropped as
    // a repeat of the first insert's block.
    await chdb.clickhouse.command({
      query: `INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
              SELECT {p:UUID}, now64(3), generateUUIDv4(number), 'second', 'u', '{}', '', now64(3) FROM numbers(1000)`,
      query_params: { p: projectId },
    });
    const result = await chdb.clickhouse.query({
      query: 'SELECT count() AS n FROM events WHERE project_id = {p:UUID}',
      query_params: { p: projectId },
      format: 'JSONEachRow',
    });
    expect(Number((await result.json<{ n: string }>())[0]?.n)).toBe(1001);
  });
});
