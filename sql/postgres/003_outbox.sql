-- Transactional outbox: every change that ClickHouse must learn about is written here in the
-- same transaction as the change itself, so no fact is lost and none is recorded for a change
-- that rolled back. The relay claims rows in batches (batch_id), delivers them with a
-- deduplication token derived from the batch, then deletes them.
create table outbox (
  id           bigint generated always as identity primary key,
  project_id   uuid not null,
  kind         text not null,
  payload      jsonb not null,
  -- clock_timestamp(), not now(): facts of one transaction keep their order, and a fact taken
  -- under a row lock is later than the fact of the transaction that held the lock before.
  occurred_at  timestamptz not null default clock_timestamp(),
  batch_id     uuid
);
create index outbox_unclaimed_idx on outbox (id) where batch_id is null;
create index outbox_claimed_idx on outbox (batch_id) where batch_id is not null;
