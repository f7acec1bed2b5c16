-- Insights (issue 24, docs/insights.md).
-- The events that show a feedback item's feature in use (PUT /projects/:id/feedbacks/:feedbackId/impact):
-- one row per linked item, replaced whole on every PUT; gone with the item or the project.
create table feedback_impact_links (
  feedback_id  uuid primary key references feedbacks (id) on delete cascade,
  project_id   uuid not null references projects (id) on delete cascade,
  event_names  text[] not null,
  updated_at   timestamptz not null default now()
);

-- SQL a project's data team keeps (GET/POST/DELETE /projects/:id/saved-queries); they run through
-- POST /projects/:id/sql like any other query. created_by is the email of the token's holder.
create table saved_queries (
  id          uuid primary key default gen_random_uuid(),
  project_id  uuid not null references projects (id) on delete cascade,
  name        text not null,
  sql         text not null,
  created_by  text not null,
  created_at  timestamptz not null default now()
);
create index saved_queries_project_idx on saved_queries (project_id, created_at desc, id desc);
