-- Rollup of `events` per project, UTC day and event name, fed on insert by events_daily_mv.
-- Metrics over long windows read this instead of raw events: at most one row per project, day
-- and name. Unique users are kept as exact uniqExact states, so merging days stays exact.
CREATE TABLE IF NOT EXISTS events_daily
(
    project_id  UUID COMMENT 'project of the events',
    day         Date COMMENT 'UTC day of created_at',
    event_name  LowCardinality(String) COMMENT 'event name',
    events      SimpleAggregateFunction(sum, UInt64) COMMENT 'number of events',
    users       AggregateFunction(uniqExact, String) COMMENT 'exact set of user_id (merge with uniqExactMerge)'
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, day, event_name)
-- Deduplicates rollup blocks of a retried insert too (with deduplicate_blocks_in_dependent_materialized_views).
SETTINGS non_replicated_deduplication_window = 10000;
