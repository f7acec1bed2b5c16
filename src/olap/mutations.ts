import type { ClickHouseClient } from './clickhouse.js';

/**
 * Mutations (`ALTER TABLE … DELETE/UPDATE`) of our data tables, run with mutations_sync so the
 * rows are changed on disk, not only hidden, when the call returns. On a cluster
 * (CLICKHOUSE_CLUSTER) the rows live in the `<table>_local` tables of every shard; mutations go
 * to those, ON CLUSTER.
 */
export type ClickHouseTarget = { client: ClickHouseClient; cluster?: string | undefined };

/** Waits for the mutation on every replica before returning. */
const MUTATION_SETTINGS = { mutations_sync: '2' };

/** Every table that holds a project's rows: the events, their user-ordered copy, the facts and both rollups. */
export const DATA_TABLES = ['events', 'events_by_user', 'facts', 'events_daily', 'events_hourly'] as const;
export type DataTable = (typeof DATA_TABLES)[number];

/** The table a mutation of `table` goes to. The cluster name was checked by the config (a plain identifier). */
function mutationTarget(target: ClickHouseTarget, table: DataTable): string {
  return target.cluster ? `${table}_local ON CLUSTER '${target.cluster}'` : table;
}

export async function mutate(target: ClickHouseTarget, table: DataTable, action: string, params: Record<string, unknown>): Promise<void> {
  await target.client.command({
    query: `ALTER TABLE ${mutationTarget(target, table)} ${action}`,
    query_params: params,
    clickhouse_settings: MUTATION_SETTINGS,
  });
}
