-- Cluster variant of ../002_facts.sql: facts_local (ReplicatedMergeTree on every node) and
-- `facts`, a Distributed table over it with the same columns.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE TABLE IF NOT EXISTS facts_local ON CLUSTER '{cluster}'
(
    project_id       UUID COMMENT 'project of the change',
    kind             LowCardinality(String) COMMENT 'feedback_created | feedback_status_changed | feedback_merged | vote_added | vote_removed | comment_added | sdk_user_registered',
    occurred_at      DateTime64(6, 'UTC') COMMENT 'commit-time clock of the change in PostgreSQL',
    fact_id          UInt64 COMMENT 'outbox id of the fact; unique',
    feedback_id      Nullable(UUID) COMMENT 'feedback item concerned (all kinds but sdk_user_registered)',
    user_id          String COMMENT 'client app user: creator, voter, commenter or registered user; empty for status changes and merges',
    category         LowCardinality(String) COMMENT 'feedback category (feedback_created), else empty',
    status           LowCardinality(String) COMMENT 'new status (feedback_created: pending; feedback_status_changed), else empty',
    previous_status  LowCardinality(String) COMMENT 'status before a feedback_status_changed, else empty',
    merged_into_id   Nullable(UUID) COMMENT 'target of a feedback_merged',
    comment_id       Nullable(UUID) COMMENT 'comment of a comment_added',
    is_admin         Bool COMMENT 'comment_added: written as admin',
    mrr              Nullable(Float64) COMMENT 'sdk_user_registered: the user''s MRR after the change (null: none)',
    first_seen_at    Nullable(DateTime64(6, 'UTC')) COMMENT 'sdk_user_registered: when the user was first registered'
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (project_id, kind, occurred_at, fact_id)
SETTINGS replicated_deduplication_window = 10000;

-- Deterministic sharding by project and fact id (see 001_events.sql).
CREATE TABLE IF NOT EXISTS facts ON CLUSTER '{cluster}' AS facts_local
ENGINE = Distributed('{cluster}', currentDatabase(), 'facts_local', cityHash64(project_id, fact_id));
