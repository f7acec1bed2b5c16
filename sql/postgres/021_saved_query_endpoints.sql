-- A saved query published as an HTTP endpoint (issue 39, docs/project-sql.md "Endpoints").
--
-- One endpoint per saved query at most (unique saved_query_id): GET /api/v1/q/:id runs the query
-- with the project SQL's isolation, plan window and limits. The read token is a random secret
-- stored only as its sha256, shown once when it is made (publishing, or rotating, makes a new
-- one: the old one stops working). Unpublishing deletes the row: the URL answers 404 from then on.
-- defaults:     a default value per `{name:Type}` parameter of the query, by name (text values).
-- cache_seconds: how long an answer may be served again for the same parameters (0: never).
-- cors_origins: exact browser origins (the allowed_origins rule) whose pages may call it; empty: none.
create table saved_query_endpoints (
  id             uuid primary key default gen_random_uuid(),
  saved_query_id uuid not null unique references saved_queries (id) on delete cascade,
  project_id     uuid not null references projects (id) on delete cascade,
  token_hash     bytea not null,
  defaults       jsonb not null default '{}',
  cache_seconds  integer not null default 0 check (cache_seconds between 0 and 3600),
  cors_origins   text[] not null default '{}',
  created_at     timestamptz not null default now(),
  token_made_at  timestamptz not null default now()
);
create index saved_query_endpoints_project_idx on saved_query_endpoints (project_id);

-- The calls of an endpoint, newest first on its page; the service keeps the latest 1000 of each.
-- status: the HTTP status answered; rows: rows answered (null on an error); cached: served from
-- the endpoint's cache without the engine. No parameter values: they may be anyone's data.
create table saved_query_endpoint_calls (
  id          bigint generated always as identity primary key,
  endpoint_id uuid not null references saved_query_endpoints (id) on delete cascade,
  called_at   timestamptz not null default now(),
  status      integer not null,
  duration_ms real not null,
  rows        integer,
  cached      boolean not null,
  format      text not null
);
create index saved_query_endpoint_calls_endpoint_idx on saved_query_endpoint_calls (endpoint_id, id desc);
