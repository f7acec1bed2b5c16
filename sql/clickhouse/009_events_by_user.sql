-- The events again, in (project, user, time) order, for the questions asked per user (funnels,
-- retention, paths: docs/insights.md). `events` is sorted by (project, time), which scatters a
-- user's rows over the whole window, so every such question was one hash GROUP BY user over every
-- row; here a user's rows are adjacent, and a GROUP BY user_id can be aggregated in order
-- (optimize_aggregation_in_order). What that measured: docs/clickhouse.md, BENCHMARKS.md.
-- Only the columns those questions read are copied (no event_id, properties JSON or received_at):
-- about a third of the disk of `events` per event. Chosen over a projection on `events` by
-- measurement (docs/clickhouse.md, "Table events_by_user").
CREATE TABLE IF NOT EXISTS events_by_user
(
    project_id     UUID COMMENT 'project that tracked the event (events.project_id)',
    user_id        String COMMENT 'the client app user id (events.user_id)',
    created_at     DateTime64(3, 'UTC') COMMENT 'when the event happened (events.created_at)',
    event_name     LowCardinality(String) COMMENT 'event name (events.event_name)',
    properties_raw String COMMENT 'the properties object exactly as sent (events.properties_raw)' CODEC(ZSTD(3))
)
ENGINE = MergeTree
-- By month, as events: a window of days reads its months only, and a month can be dropped alike.
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, user_id, created_at)
-- Deduplicates the blocks of a retried insert too (with deduplicate_blocks_in_dependent_materialized_views).
SETTINGS non_replicated_deduplication_window = 10000;

-- Fed from every insert into events, in the same insert (a retried batch is deduplicated here too).
CREATE MATERIALIZED VIEW IF NOT EXISTS events_by_user_mv TO events_by_user AS
SELECT project_id, user_id, created_at, event_name, properties_raw
FROM events;

-- The events stored before this table existed. An event inserted while this runs may be copied
-- by the view and by this statement: the insights count users and collapse repeated events, so
-- an exact copy of a row changes no answer (docs/clickhouse.md).
INSERT INTO events_by_user
SETTINGS insert_deduplicate = 0
SELECT project_id, user_id, created_at, event_name, properties_raw
FROM events;
