-- Cluster variant of ../010_events_by_user_key.sql: the column on the replicated table of every
-- node and on the Distributed table over them, with the same MATERIALIZED expression: an insert
-- through the Distributed table (a repair's) sends the other columns and each node computes the
-- key from user_id (ClickHouse's insert_allow_materialized_columns = 0), where a plain column on
-- the Distributed table would be sent as 0. The rewrite of the stored parts runs on every replica.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
ALTER TABLE events_by_user_local ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS user_key UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(user_id)) COMMENT 'sipHash128(user_id) as a number: the GROUP BY user of the insights' AFTER user_id;

ALTER TABLE events_by_user ON CLUSTER '{cluster}' ADD COLUMN IF NOT EXISTS user_key UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(user_id)) COMMENT 'sipHash128(user_id) as a number: the GROUP BY user of the insights' AFTER user_id;

ALTER TABLE events_by_user_local ON CLUSTER '{cluster}' MATERIALIZE COLUMN user_key SETTINGS mutations_sync = 2;
