-- Data rights (docs/data-rights.md): erasure of an SDK user's data (GDPR Art. 17) and the
-- ClickHouse side of a project's deletion, as durable jobs. A job row is written in the same
-- transaction as the request that asks for it; a worker (src/workers/erasure.worker.ts) claims it
-- under a session advisory lock (released by PostgreSQL the moment its process dies, so no lease
-- has to expire) and advances it step by step, committing each step's end here, so a process that
-- dies half-way leaves a job that the next worker resumes at the step it had reached. Every step
-- is safe to run twice.

-- One erasure of one SDK user of one project. Deleting the project deletes its erasures (the
-- project's own deletion job then removes everything in ClickHouse anyway).
create table erasures (
  id            uuid primary key default gen_random_uuid(),
  project_id    uuid not null references projects (id) on delete cascade,
  -- The erased user id, needed until the last step; cleared when the job is done, so the record
  -- of the erasure does not keep the identifier it erased.
  user_id       text check (user_id is null or char_length(user_id) >= 1),
  -- What the user's feedback and comments are attributed to afterwards: random, not derived from
  -- the user id, the same in PostgreSQL and ClickHouse.
  anonymous_id  text not null,
  status        text not null default 'pending' check (status in ('pending', 'running', 'done', 'failed')),
  -- The next step to run (src/workers/erasure.worker.ts lists them in order).
  step          text not null default 'postgres',
  -- UTC days that held the user's events, read before they are deleted: the rollups of these days
  -- are rebuilt from the remaining events.
  days          date[],
  -- When the PostgreSQL step committed: facts and events written before it must have reached
  -- ClickHouse before the ClickHouse steps run.
  settled_after timestamptz,
  -- What the PostgreSQL step removed, for the record (counts only).
  summary       jsonb not null default '{}',
  attempts      integer not null default 0,
  last_error    text,
  -- When the worker may try again (after a failure, or while the step waits for others).
  next_attempt_at timestamptz not null default now(),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  completed_at  timestamptz
);
create index erasures_project_idx on erasures (project_id, created_at desc);
create index erasures_due_idx on erasures (next_attempt_at) where status in ('pending', 'running');
-- One open erasure per user and project: asking twice answers the open one.
create unique index erasures_open_idx on erasures (project_id, user_id) where status in ('pending', 'running');

-- The ClickHouse side of a deleted project. The project row (and, by cascade, everything of it in
-- PostgreSQL) is deleted by the request; this row outlives it, so it references nothing.
create table project_deletions (
  id            uuid primary key default gen_random_uuid(),
  project_id    uuid not null,
  project_name  text not null,
  -- The account that owned the project: only its admin tokens may read this job.
  account_id    uuid not null references accounts (id) on delete cascade,
  status        text not null default 'pending' check (status in ('pending', 'running', 'done', 'failed')),
  step          text not null default 'settle',
  settled_after timestamptz not null default now(),
  attempts      integer not null default 0,
  last_error    text,
  next_attempt_at timestamptz not null default now(),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  completed_at  timestamptz
);
create index project_deletions_account_idx on project_deletions (account_id, created_at desc);
create index project_deletions_due_idx on project_deletions (next_attempt_at) where status in ('pending', 'running');

-- Admin tokens: when each was issued is in created_at; a reissue may revoke the others.
-- Operators list accounts by email prefix and page by (created_at, id).
create index accounts_created_idx on accounts (created_at, id);
