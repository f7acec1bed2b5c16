-- Credentials of the read-only ClickHouse HTTP interface (issue 29, docs/clickhouse-interface.md).
--
-- A credential reads one project's analytics through /clickhouse (or CLICKHOUSE_INTERFACE_PORT)
-- and nothing else: it is neither an API key nor an admin token. Its username is the project id,
-- so several credentials of a project share it; the password is a random secret stored only as
-- its sha256 (looked up by one unique-index probe), shown once when it is created. Revoking one
-- deletes its row: the next request with it finds nothing.
-- last_used_at: when it last authenticated a request, kept to the minute (a write per request
-- would cost more than the query).
create table clickhouse_credentials (
  id            uuid primary key default gen_random_uuid(),
  project_id    uuid not null references projects (id) on delete cascade,
  password_hash bytea not null unique,
  created_at    timestamptz not null default now(),
  last_used_at  timestamptz
);
create index clickhouse_credentials_project_idx on clickhouse_credentials (project_id, created_at);
