-- The idempotency window's own index of stored event ids (docs/ingestion.md, "Idempotency
-- window"). Looking a client eventId up in `events` reads the event_id index of every stored row
-- of the project, so its cost grew with the rows stored; this table holds one small row per
-- event for two days only (the window is 24 hours, plus the time the in-memory filters remember
-- an id, plus margin), sorted by (project_id, event_id): a lookup filtered on received_at reads
-- at most three daily partitions, by their sort key. `created_at` then finds the event itself in
-- `events` through its sort key (project_id, created_at, event_id).
CREATE TABLE IF NOT EXISTS event_ids
(
    project_id  UUID COMMENT 'project of the event',
    event_id    UUID COMMENT 'the event id (a client eventId or a server UUIDv7)',
    created_at  DateTime64(3, 'UTC') COMMENT 'the stored event''s created_at: its place in the sort key of events',
    received_at DateTime64(3, 'UTC') COMMENT 'when the API acknowledged the event: the window is measured from it'
)
ENGINE = MergeTree
PARTITION BY toDate(received_at, 'UTC')
ORDER BY (project_id, event_id)
TTL toDateTime(received_at) + INTERVAL 2 DAY
-- Whole daily parts are dropped once past the TTL, never rewritten row by row.
SETTINGS ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Fed from every insert into events (a retried batch is deduplicated here too, with
-- deduplicate_blocks_in_dependent_materialized_views).
CREATE MATERIALIZED VIEW IF NOT EXISTS event_ids_mv TO event_ids AS
SELECT project_id, event_id, created_at, received_at
FROM events;

-- The ids of the window stored before this table existed (a row written twice by the view and
-- by this copy is harmless: lookups group by id).
INSERT INTO event_ids
SELECT project_id, event_id, created_at, received_at
FROM events
WHERE received_at >= now64(3) - INTERVAL 2 DAY;
