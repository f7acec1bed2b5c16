-- Feeds events_hourly from every insert into events.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_hourly_mv TO events_hourly AS
SELECT
    project_id,
    toStartOfHour(created_at, 'UTC') AS hour,
    event_name,
    count() AS events,
    uniqExactState(user_id) AS users
FROM events
GROUP BY project_id, hour, event_name;
