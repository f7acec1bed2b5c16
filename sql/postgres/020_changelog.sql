-- The changelog (issue 40, docs/api-guide.md "Changelog"): what a project shipped, told to the
-- people who asked. `body` is the owner's Markdown; `html` its sanitized rendering, made on the
-- server when the body is written (src/core/changelog-html.ts), so every reader (the board, the
-- Atom feed, GET /changelog, the widget) gets the same safe HTML and none renders Markdown itself.
create table changelog_entries (
  id            uuid primary key default gen_random_uuid(),
  project_id    uuid not null references projects (id) on delete cascade,
  title         text not null check (char_length(title) between 1 and 200),
  body          text not null check (char_length(body) <= 20000),
  html          text not null,
  category      text check (char_length(category) between 1 and 50),
  -- draft: the owner's alone; scheduled: publishes itself at publish_at; published: public.
  state         text not null check (state in ('draft', 'scheduled', 'published')),
  publish_at    timestamptz,
  published_at  timestamptz,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now(),
  check (state <> 'scheduled' or publish_at is not null),
  check ((state = 'published') = (published_at is not null))
);
-- The public list (newest first) and the owner's.
create index changelog_entries_published_idx on changelog_entries (project_id, published_at desc, id desc) where state = 'published';
create index changelog_entries_project_idx on changelog_entries (project_id, created_at desc, id desc);
-- What the scheduler looks for: entries whose time has come.
create index changelog_entries_due_idx on changelog_entries (publish_at) where state = 'scheduled';

-- The items an entry ships, in the order the owner listed them. Items of the entry's project only
-- (checked by the route); an item deleted later leaves the entry.
create table changelog_entry_items (
  entry_id     uuid not null references changelog_entries (id) on delete cascade,
  feedback_id  uuid not null references feedbacks (id) on delete cascade,
  position     integer not null check (position >= 0),
  primary key (entry_id, feedback_id)
);
create index changelog_entry_items_feedback_idx on changelog_entry_items (feedback_id);
