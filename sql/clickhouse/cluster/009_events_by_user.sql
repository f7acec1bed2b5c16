-- Cluster variant of ../009_events_by_user.sql: on every node, events_by_user_local holds that
-- node's events (fed by events_by_user_mv from its events_local) in (project, user, time) order;
-- `events_by_user` is a Distributed table over them. A user's rows live on the shards of their
-- events, so a GROUP BY user over the Distributed table is aggregated in order on each shard and
-- merged on the node that asked.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS events_by_user_local ON CLUSTER '{cluster}'
(
    project_id     UUID COMMENT 'project that tracked the event (events.project_id)',
    user_id        String COMMENT 'the client app user id (events.user_id)',
    created_at     DateTime64(3, 'UTC') COMMENT 'when the event happened (events.created_at)',
    event_name     LowCardinality(String) COMMENT 'event name (events.event_name)',
    properties_raw String COMMENT 'the properties object exactly as sent (events.properties_raw)' CODEC(ZSTD(3))
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(created_at)
ORDER BY (project_id, user_id, created_at)
SETTINGS replicated_deduplication_window = 10000;

-- Rows written to it directly (the backfill below, a repair after a cut insert) go to a shard by
-- project and user.
CREATE TABLE IF NOT EXISTS events_by_user ON CLUSTER '{cluster}' AS events_by_user_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'events_by_user_local', cityHash64(project_id, user_id));

-- Fed from every insert into each node's events_local.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_by_user_mv ON CLUSTER '{cluster}' TO events_by_user_local AS
SELECT project_id, user_id, created_at, event_name, properties_raw
FROM events_local;

-- The backfill runs once, on the node that migrates (the ledger is replicated): it reads every
-- shard's events through the Distributed table and writes through the Distributed copy.
INSERT INTO events_by_user
SETTINGS insert_deduplicate = 0
SELECT project_id, user_id, created_at, event_name, properties_raw
FROM events;
