-- Facts of the feedback database (PostgreSQL), relayed from its transactional outbox: every
-- change that metrics and data teams join with events. One row per fact, in commit order per
-- entity; `fact_id` is the outbox id, unique per fact.
CREATE TABLE IF NOT EXISTS facts
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
ENGINE = MergeTree
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (project_id, kind, occurred_at, fact_id)
SETTINGS non_replicated_deduplication_window = 10000;
