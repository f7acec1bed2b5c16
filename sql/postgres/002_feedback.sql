create table feedbacks (
  id                uuid primary key default gen_random_uuid(),
  project_id        uuid not null references projects (id) on delete cascade,
  title             text not null check (char_length(title) between 1 and 200),
  description       text not null check (char_length(description) between 1 and 5000),
  category          text not null check (category in ('feature_request', 'bug_report', 'improvement', 'other')),
  status            text not null default 'pending'
                    check (status in ('pending', 'approved', 'in_progress', 'testflight', 'completed', 'rejected')),
  user_id           text not null check (char_length(user_id) >= 1),
  user_email        text,
  -- Denormalised counters, changed only in the transaction that inserts or deletes the vote or
  -- comment row (under the feedback row's lock), so they stay exact; the checks make drift loud.
  vote_count        integer not null default 0 check (vote_count >= 0),
  comment_count     integer not null default 0 check (comment_count >= 0),
  rejection_reason  text check (char_length(rejection_reason) <= 500),
  merged_into_id    uuid references feedbacks (id),
  merged_at         timestamptz,
  created_at        timestamptz not null default now(),
  updated_at        timestamptz not null default now(),
  check ((merged_into_id is null) = (merged_at is null)),
  check (merged_into_id is distinct from id)
);
-- The list endpoint always filters by project; these serve its default sort and the merge lookups.
create index feedbacks_project_votes_idx on feedbacks (project_id, vote_count desc, created_at desc, id desc);
create index feedbacks_project_created_idx on feedbacks (project_id, created_at, id);
create index feedbacks_merged_into_idx on feedbacks (merged_into_id) where merged_into_id is not null;

-- One vote per user per item: the primary key is what makes a second vote a 409.
create table votes (
  feedback_id           uuid not null references feedbacks (id) on delete cascade,
  user_id               text not null check (char_length(user_id) >= 1),
  email                 text,
  notify_status_change  boolean not null default false,
  created_at            timestamptz not null default now(),
  primary key (feedback_id, user_id)
);

create table comments (
  id           uuid primary key default gen_random_uuid(),
  -- Insertion order: the tie-break for comments created in the same microsecond.
  seq          bigint generated always as identity,
  feedback_id  uuid not null references feedbacks (id) on delete cascade,
  user_id      text not null check (char_length(user_id) >= 1),
  content      text not null check (char_length(content) between 1 and 2000),
  is_admin     boolean not null default false,
  created_at   timestamptz not null default now()
);
create index comments_feedback_idx on comments (feedback_id, created_at, seq);

-- Users of the client apps, identified by the app's own opaque user id.
create table sdk_users (
  id             uuid primary key default gen_random_uuid(),
  project_id     uuid not null references projects (id) on delete cascade,
  user_id        text not null check (char_length(user_id) >= 1),
  mrr            double precision check (mrr >= 0),
  first_seen_at  timestamptz not null default now(),
  last_seen_at   timestamptz not null default now(),
  unique (project_id, user_id)
);
