import type { ClickHouseSettings } from '@clickhouse/client';

/**
 * Settings of every batch insert. We batch ourselves, so async inserts are off: with them on
 * (chDB's default) a deduplicated block still reaches the materialized views, and rollups would
 * count a retried batch twice. The token names the batch; a retry with the same token is dropped
 * from the table and, with the dependent-views setting, from every rollup fed by it.
 *
 * Note: the chDB connection applies settings as session-wide SET statements, so they outlast the
 * insert; every insert of ours therefore passes its own token.
 */
export function batchInsertSettings(token: string): ClickHouseSettings {
  return {
    async_insert: 0,
    insert_deduplicate: 1,
    insert_deduplication_token: token,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    // A property string stays a string in the events' JSON column: with inference on (the
    // default), "2024-01-01T10:00:00Z" was stored as a DateTime and read back as
    // "2024-01-01 10:00:00", so a filter on the text (docs/metrics.md, "Filters") would not see
    // what was sent, and the JSON column would disagree with properties_raw.
    input_format_try_infer_dates: 0,
    input_format_try_infer_datetimes: 0,
  };
}
