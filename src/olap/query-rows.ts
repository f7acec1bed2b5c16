import type { ClickHouseSettings } from '@clickhouse/client';
import type { ClickHouseClient } from './clickhouse.js';

/**
 * Rows of one parameterised query, 64-bit integers as JSON numbers. A parameter whose value is
 * undefined is left out, so an absent optional filter can be left out of the query text and of
 * the parameters alike.
 */
export async function queryRows<T>(
  client: ClickHouseClient,
  query: string,
  params: Record<string, unknown>,
  settings: ClickHouseSettings = {},
): Promise<T[]> {
  const result = await client.query({
    query,
    query_params: Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined)),
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0, ...settings },
  });
  return result.json<T>();
}
