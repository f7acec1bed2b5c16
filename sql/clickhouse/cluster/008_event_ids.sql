-- Cluster variant of ../008_event_ids.sql: each shard keeps the ids of its own events in
-- event_ids_local (fed by event_ids_mv from that node's events_local, so an id lives on the shard
-- of its event); `event_ids` is a Distributed table over them with the sharding key of `events`.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS event_ids_local ON CLUSTER '{cluster}'
(
    project_id  UUID COMMENT 'project of the event',
    event_id    UUID COMMENT 'the event id (a client eventId or a server UUIDv7)',
    created_at  DateTime64(3, 'UTC') COMMENT 'the stored event''s created_at: its place in the sort key of events',
    received_at DateTime64(3, 'UTC') COMMENT 'when the API acknowledged the event: the window is measured from it'
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toDate(received_at, 'UTC')
ORDER BY (project_id, event_id)
TTL toDateTime(received_at) + INTERVAL 2 DAY
-- Whole daily parts are dropped once past the TTL, never rewritten row by row.
SETTINGS ttl_only_drop_parts = 1, replicated_deduplication_window = 10000;

-- The same sharding key as events, so the backfill below sends each id to its event's shard.
CREATE TABLE IF NOT EXISTS event_ids ON CLUSTER '{cluster}' AS event_ids_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'event_ids_local', cityHash64(project_id, event_id));

-- Fed from every insert into each node's events_local.
CREATE MATERIALIZED VIEW IF NOT EXISTS event_ids_mv ON CLUSTER '{cluster}' TO event_ids_local AS
SELECT project_id, event_id, created_at, received_at
FROM events_local;

-- No backfill here, unlike the single-server file: every statement of a cluster migration runs
-- ON CLUSTER, and an INSERT … SELECT cannot. A retry, within two days of an upgrade, of an event
-- stored before it may then be stored twice on a cluster (docs/ingestion.md, "Idempotency window").
