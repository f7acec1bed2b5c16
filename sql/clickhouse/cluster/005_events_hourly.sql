-- Cluster variant of ../005_events_hourly.sql: events_hourly_local on every node (fed by
-- events_hourly_mv, 006) and `events_hourly`, a Distributed table over it.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS events_hourly_local ON CLUSTER '{cluster}'
(
    project_id  UUID COMMENT 'project of the events',
    hour        DateTime('UTC') COMMENT 'UTC hour of created_at (start of the hour)',
    event_name  LowCardinality(String) COMMENT 'event name',
    events      SimpleAggregateFunction(sum, UInt64) COMMENT 'number of events',
    users       AggregateFunction(uniqExact, String) COMMENT 'exact set of user_id (merge with uniqExactMerge)'
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, event_name)
SETTINGS replicated_deduplication_window = 10000;

CREATE TABLE IF NOT EXISTS events_hourly ON CLUSTER '{cluster}' AS events_hourly_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'events_hourly_local');
