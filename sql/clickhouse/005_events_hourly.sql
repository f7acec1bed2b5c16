-- Rollup of `events` per project, UTC hour and event name, for hourly time series; fed on insert
-- by events_hourly_mv. Same columns as events_daily.
CREATE TABLE IF NOT EXISTS events_hourly
(
    project_id  UUID COMMENT 'project of the events',
    hour        DateTime('UTC') COMMENT 'UTC hour of created_at (start of the hour)',
    event_name  LowCardinality(String) COMMENT 'event name',
    events      SimpleAggregateFunction(sum, UInt64) COMMENT 'number of events',
    users       AggregateFunction(uniqExact, String) COMMENT 'exact set of user_id (merge with uniqExactMerge)'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, event_name)
SETTINGS non_replicated_deduplication_window = 10000;
