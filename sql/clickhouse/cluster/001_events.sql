-- Cluster variant of ../001_events.sql (selected by CLICKHOUSE_CLUSTER): the rows live in
-- events_local, a ReplicatedMergeTree created on every node; `events` is a Distributed table over
-- it with the same columns, so the service inserts into and reads `events` as on one server.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS events_local ON CLUSTER '{cluster}'
(
    project_id     UUID COMMENT 'project that tracked the event (projects.id in PostgreSQL)',
    created_at     DateTime64(3, 'UTC') COMMENT 'when the event happened: the client timestamp when sent, else server receive time',
    event_id       UUID COMMENT 'server UUIDv7, or the client eventId that makes retries idempotent',
    event_name     LowCardinality(String) COMMENT 'event name, 1 to 100 characters; feedback_list, feedback_detail and submit_feedback are predefined',
    user_id        String COMMENT 'the client app user id (opaque)',
    properties     JSON(max_dynamic_paths = 256) COMMENT 'free key-value properties, queryable as properties.<key> (nested objects as properties.a.b)',
    properties_raw String COMMENT 'the properties object exactly as sent (JSON text), empty when none was sent' CODEC(ZSTD(3)),
    received_at    DateTime64(3, 'UTC') COMMENT 'when the API acknowledged the event',
    INDEX event_id_bloom event_id TYPE bloom_filter(0.001) GRANULARITY 4
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, created_at, event_id)
-- Remember the last 10000 inserted blocks (in Keeper), so a batch retried with the same
-- insert_deduplication_token is dropped instead of stored twice.
SETTINGS replicated_deduplication_window = 10000;

-- Rows go to a shard by project and event id: deterministic, so a retried batch reaches each
-- shard as the same block (and is dropped there by its token), and a busy project is spread.
CREATE TABLE IF NOT EXISTS events ON CLUSTER '{cluster}' AS events_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'events_local', cityHash64(project_id, event_id));
