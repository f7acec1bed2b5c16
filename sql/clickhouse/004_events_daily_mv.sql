-- Feeds events_daily from every insert into events.
CREATE MATERIALIZED VIEW IF NOT EXISTS events_daily_mv TO events_daily AS
SELECT
    project_id,
    toDate(created_at, 'UTC') AS day,
    event_name,
    count() AS events,
    uniqExactState(user_id) AS users
FROM events
GROUP BY project_id, day, event_name;
