-- Cluster variant of ../006_events_hourly_mv.sql: on every node, feeds events_hourly_local
-- from each insert into that node's events_local.
-- {cluster} is replaced by CLICKHOUSE_CLUSTER when the service migrates; {shard}, {replica},
-- {database} and {table} are expanded by each server (its <macros>).
CREATE MATERIALIZED VIEW IF NOT EXISTS events_hourly_mv ON CLUSTER '{cluster}' TO events_hourly_local AS
SELECT
    project_id,
    toStartOfHour(created_at, 'UTC') AS hour,
    event_name,
    count() AS events,
    uniqExactState(user_id) AS users
FROM events_local
GROUP BY project_id, hour, event_name;
