-- Dead letters: rows ClickHouse refused because of their data (a parse or value error, never an
-- outage), isolated from their batch so that every other row of it was stored. One row per
-- refused event or fact, kept until an operator deletes it (docs/dead-letters.md).
create table dead_letters (
  id           bigint generated always as identity primary key,
  -- 'event' (the events table) or 'fact' (the facts table)
  kind         text not null check (kind in ('event', 'fact')),
  -- project of the row; null only when the row's own project id is not a UUID
  project_id   uuid,
  -- what makes the row unique in its table (event: project and event id; fact: fact id): a batch
  -- isolated again after a crash or retry records its dead letters once
  row_key      text not null,
  -- the row as it was sent to ClickHouse, as JSON text: JSON escapes what text cannot hold
  -- (NUL, lone surrogates), and text, unlike jsonb, keeps such escapes as they are
  payload      text not null,
  -- ClickHouse's error: its code (e.g. 117), name (INCORRECT_DATA) and message
  error_code   text not null,
  error_name   text not null,
  error        text not null,
  created_at   timestamptz not null default now(),
  unique (kind, row_key)
);
-- The operator's listing: newest first, optionally one kind or one project.
create index dead_letters_list_idx on dead_letters (created_at desc, id desc);
create index dead_letters_project_idx on dead_letters (project_id, created_at desc, id desc);
