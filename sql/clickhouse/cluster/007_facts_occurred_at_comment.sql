-- Cluster variant of ../007_facts_occurred_at_comment.sql: the new comment on the replicated
-- table and on the Distributed table over it (each keeps its own column list).
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
ALTER TABLE facts_local ON CLUSTER '{cluster}' COMMENT COLUMN occurred_at 'time of the change in PostgreSQL: clock_timestamp() at the outbox insert, inside its transaction';

ALTER TABLE facts ON CLUSTER '{cluster}' COMMENT COLUMN occurred_at 'time of the change in PostgreSQL: clock_timestamp() at the outbox insert, inside its transaction';
