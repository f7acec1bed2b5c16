-- Cluster variant of ../004_events_daily_mv.sql: on every node, feeds events_daily_local from
-- each insert into that node's events_local (the rows a Distributed insert sent to its shard).
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE MATERIALIZED VIEW IF NOT EXISTS events_daily_mv ON CLUSTER '{cluster}' TO events_daily_local AS
SELECT
    project_id,
    toDate(created_at, 'UTC') AS day,
    event_name,
    count() AS events,
    uniqExactState(user_id) AS users
FROM events_local
GROUP BY project_id, day, event_name;
