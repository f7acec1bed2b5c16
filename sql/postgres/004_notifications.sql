-- Notifications (SPEC 1, 4.2, 4.4, 8.2): team members, integrations, and the reliable delivery of
-- what they are sent. Nothing is sent inside a request: the request writes a `notifications` row
-- in its own transaction (an outbox), and the workers expand it into `deliveries` and send them.

-- Team members of a project (Team tier). A member receives the project's notifications by email.
create table project_members (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references projects (id) on delete cascade,
  email       text not null check (char_length(email) between 3 and 320),
  created_at  timestamptz not null default now()
);
-- One membership per address and project, whatever its casing.
create unique index project_members_email_idx on project_members (project_id, lower(email));

-- A member's own admin token of the account: removing the member revokes it with the row.
alter table admin_tokens add column member_id uuid references project_members (id) on delete cascade;
create index admin_tokens_member_idx on admin_tokens (member_id) where member_id is not null;

-- Slack and Discord incoming webhooks, and generic signed webhooks (Pro and Team tiers). A downgrade
-- keeps the rows; delivery checks the plan when it expands a notification.
create table integrations (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references projects (id) on delete cascade,
  kind        text not null check (kind in ('slack', 'discord', 'webhook')),
  url         text not null check (char_length(url) between 1 and 2048),
  -- HMAC-SHA256 key of a generic webhook. Kept in clear text because signing needs it; the API
  -- never returns it.
  secret      text,
  -- Notification types this integration receives; null means all of them.
  events      text[],
  enabled     boolean not null default true,
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);
create index integrations_project_idx on integrations (project_id, created_at);

-- The notification outbox: one row per change that notifies anyone, written in the change's
-- transaction, so a notification exists exactly when its change committed.
create table notifications (
  id             bigint generated always as identity primary key,
  project_id     uuid not null references projects (id) on delete cascade,
  type           text not null check (type in ('feedback.created', 'feedback.status_changed')),
  payload        jsonb not null,
  created_at     timestamptz not null default clock_timestamp(),
  -- Set in the transaction that creates its deliveries.
  dispatched_at  timestamptz
);
create index notifications_pending_idx on notifications (id) where dispatched_at is null;

-- One row per notification and recipient, created before anything is sent. Its id is the
-- idempotency key a webhook receives and the Message-ID of an email, so a job that runs twice
-- never produces a second message for the same recipient.
create table deliveries (
  id               uuid primary key default gen_random_uuid(),
  notification_id  bigint not null references notifications (id) on delete cascade,
  project_id       uuid not null references projects (id) on delete cascade,
  channel          text not null check (channel in ('email', 'slack', 'discord', 'webhook')),
  -- The email address, or the integration's id.
  recipient        text not null,
  integration_id   uuid references integrations (id) on delete set null,
  status           text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts         integer not null default 0 check (attempts >= 0),
  last_error       text,
  next_attempt_at  timestamptz not null default now(),
  delivered_at     timestamptz,
  created_at       timestamptz not null default now(),
  updated_at       timestamptz not null default now(),
  unique (notification_id, channel, recipient)
);
create index deliveries_due_idx on deliveries (next_attempt_at) where status = 'pending';
create index deliveries_project_status_idx on deliveries (project_id, status, created_at);

-- Per-voter unsubscribe link of status-change emails.
alter table votes add column unsubscribe_token uuid not null default gen_random_uuid();
