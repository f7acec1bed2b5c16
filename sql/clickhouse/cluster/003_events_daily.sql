-- Cluster variant of ../003_events_daily.sql: each shard rolls up its own events into
-- events_daily_local (fed by events_daily_mv, 004); `events_daily` is a Distributed table over
-- the shards' rollups. Queries merge the per-shard states (sum, uniqExactMerge), which stays exact.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS events_daily_local ON CLUSTER '{cluster}'
(
    project_id  UUID COMMENT 'project of the events',
    day         Date COMMENT 'UTC day of created_at',
    event_name  LowCardinality(String) COMMENT 'event name',
    events      SimpleAggregateFunction(sum, UInt64) COMMENT 'number of events',
    users       AggregateFunction(uniqExact, String) COMMENT 'exact set of user_id (merge with uniqExactMerge)'
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name)
-- Deduplicates rollup blocks of a retried insert too (with deduplicate_blocks_in_dependent_materialized_views).
SETTINGS replicated_deduplication_window = 10000;

-- Read-only: rows come from the materialized view on each shard, so there is no sharding key.
CREATE TABLE IF NOT EXISTS events_daily ON CLUSTER '{cluster}' AS events_daily_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'events_daily_local');
