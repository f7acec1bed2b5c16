-- Accounts own projects and hold the subscription plan (DESIGN.md 3).
create table accounts (
  id          uuid primary key default gen_random_uuid(),
  email       text not null unique,
  plan        text not null check (plan in ('free', 'pro', 'team')),
  created_at  timestamptz not null default now(),
  updated_at  timestamptz not null default now()
);

-- Admin bearer tokens of an account, stored as sha256 only. An account may hold several
-- (one per team member later on), so they live in their own table.
create table admin_tokens (
  id          uuid primary key default gen_random_uuid(),
  account_id  uuid not null references accounts (id) on delete cascade,
  token_hash  bytea not null unique,
  created_at  timestamptz not null default now()
);
create index admin_tokens_account_idx on admin_tokens (account_id);

create table projects (
  id            uuid primary key default gen_random_uuid(),
  account_id    uuid not null references accounts (id) on delete cascade,
  name          text not null check (char_length(name) between 1 and 200),
  -- sha256 of the current API key; rotating replaces it, so the old key stops at once.
  api_key_hash  bytea not null unique,
  archived      boolean not null default false,
  suspended     boolean not null default false,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create index projects_account_idx on projects (account_id, created_at);
