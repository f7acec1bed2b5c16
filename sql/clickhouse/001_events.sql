-- Tracked analytics events (SPEC 4.9, part 6): one row per event, written in batches by the
-- ingestion workers. Sorted by project, then time: every metrics query and every hand-written
-- query filters one project and a time range, and the raw event feed pages newest-first by
-- (created_at, event_id) -- that key serves all three. Aggregates by event name come from
-- rollups, so event_name is not needed in the sort key.
CREATE TABLE IF NOT EXISTS events
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
ENGINE = MergeTree
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, created_at, event_id)
-- Remember the last 10000 inserted blocks, so a batch retried with the same
-- insert_deduplication_token is dropped instead of stored twice.
SETTINGS non_replicated_deduplication_window = 10000;
