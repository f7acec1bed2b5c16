-- Alerts on metrics and the weekly digest (issue 41, docs/notifications.md "Alerts" and "The weekly
-- digest"). An alert asks one metrics question (a measure, optionally an event and filters, as the
-- metrics API asks it) of each completed interval and tells its channels when its condition starts
-- or stops holding.
create table alerts (
  id               uuid primary key default gen_random_uuid(),
  project_id       uuid not null references projects (id) on delete cascade,
  name             text not null check (char_length(name) between 1 and 200),
  -- The metrics question, validated as the admin surface of the metrics API validates it.
  measure          text not null check (char_length(measure) between 1 and 300),
  event            text check (char_length(event) between 1 and 100),
  filters          jsonb not null default '[]',
  interval_unit    text not null check (interval_unit in ('hour', 'day', 'week')),
  condition_type   text not null check (condition_type in ('above', 'below', 'increase', 'decrease')),
  -- The threshold of above/below, or the percentage of increase/decrease.
  condition_value  double precision not null,
  email            boolean not null default false,
  enabled          boolean not null default true,
  state            text not null default 'unknown' check (state in ('unknown', 'ok', 'firing')),
  last_value       double precision,
  last_checked_at  timestamptz,
  -- Start of the latest interval checked: an interval at or before it is never checked again, so
  -- each interval is checked once whatever the number of workers (src/oltp/alerts.repo.ts).
  checked_through  timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  check (condition_type in ('above', 'below') or condition_value > 0)
);
create index alerts_project_idx on alerts (project_id, created_at, id);
-- What the evaluator looks for: enabled alerts.
create index alerts_enabled_idx on alerts (checked_through) where enabled;

-- The integrations an alert notifies: the project's own (checked by the route); an integration
-- deleted later leaves its alerts.
create table alert_integrations (
  alert_id        uuid not null references alerts (id) on delete cascade,
  integration_id  uuid not null references integrations (id) on delete cascade,
  primary key (alert_id, integration_id)
);
create index alert_integrations_integration_idx on alert_integrations (integration_id);

-- The checks of an alert, the last 100 kept (older ones are deleted by the check that adds one).
-- One row per alert and interval: the unique key is the second guard of "each interval once".
create table alert_checks (
  id               bigint generated always as identity primary key,
  alert_id         uuid not null references alerts (id) on delete cascade,
  interval_start   timestamptz not null,
  interval_end     timestamptz not null,
  -- null: the measure has no value for the interval (a ratio without users, math over no value).
  value            double precision,
  previous_value   double precision,
  -- increase/decrease: the change against the interval before in percent; null without one.
  change_percent   double precision,
  state            text not null check (state in ('ok', 'firing')),
  -- The change of state this check made known: firing, resolved, or none.
  notified         text check (notified in ('firing', 'resolved')),
  -- Completed intervals since the previous check that were not checked (after a stop).
  skipped          integer not null default 0 check (skipped >= 0),
  checked_at       timestamptz not null default now(),
  unique (alert_id, interval_start)
);
create index alert_checks_alert_idx on alert_checks (alert_id, interval_start desc);
-- The digest's "alerts that fired": checks that notified firing, by time.
create index alert_checks_fired_idx on alert_checks (checked_at) where notified = 'firing';

-- Who gets a project's weekly digest. One row per recipient once they (or the first digest) wrote
-- one: member_id null is the account owner, on by default; a member is off until it turns it on.
-- The token is the digest email's one-click unsubscribe link.
create table digest_subscriptions (
  id                 uuid primary key default gen_random_uuid(),
  project_id         uuid not null references projects (id) on delete cascade,
  member_id          uuid references project_members (id) on delete cascade,
  enabled            boolean not null,
  unsubscribe_token  uuid not null unique default gen_random_uuid(),
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now()
);
create unique index digest_subscriptions_recipient_idx
  on digest_subscriptions (project_id, coalesce(member_id, '00000000-0000-0000-0000-000000000000'));

-- One row per project and week whose digest was sent: the primary key makes the send happen once,
-- whatever the number of workers; `content` is what was sent (the week's figures as computed then).
create table digest_runs (
  project_id  uuid not null references projects (id) on delete cascade,
  week_start  date not null,
  content     jsonb not null,
  created_at  timestamptz not null default now(),
  primary key (project_id, week_start)
);
