-- The project's session timeout (docs/sessions.md): a session is a run of one user's events with
-- no gap between consecutive events longer than this many minutes. Read by every session measure
-- and the user timeline at query time, so a change applies to every window at once, past ones too.
-- 30 minutes by default, as the products owners compare us with; at most a day.
alter table projects
  add column session_timeout_minutes integer not null default 30
    check (session_timeout_minutes between 1 and 1440);
