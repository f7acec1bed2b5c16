import type { FactRow } from '../../core/fact.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { batchInsertSettings } from './insert-settings.js';

/** Inserts relayed facts; `token` (from the outbox batch) makes a redelivered batch a no-op. */
export async function insertFacts(client: ClickHouseClient, facts: FactRow[], token: string): Promise<void> {
  if (facts.length === 0) return;
  await client.insert({
    table: 'facts',
    format: 'JSONEachRow',
    values: facts,
    clickhouse_settings: batchInsertSettings(token),
  });
}
