-- Issue trackers (issue 42, docs/integrations.md): GitHub Issues and Linear, both ways.
--
-- A tracker is an integration of its own kind (`github`, `linear`), so it is listed, counted and
-- removed with the others (SPEC 8.2: Pro and Team). Its `url` is the tracker's API address
-- (api_url). It takes no notification messages of the Slack/Discord/webhook kind: its `events`
-- is the empty array, which the dispatcher's `events is null or type = any (events)` never
-- matches; it follows items through its links instead.
alter table integrations drop constraint integrations_kind_check;
alter table integrations add constraint integrations_kind_check
  check (kind in ('slack', 'discord', 'webhook', 'github', 'linear'));

-- What a tracker integration needs beyond an integration row, one row per tracker integration.
-- token_sealed:          the owner's GitHub token or Linear API key, AES-256-GCM under the
--                        service's SECRETS_KEY (src/core/secret-box.ts); never answered back.
-- webhook_secret_sealed: the HMAC-SHA256 key the tracker signs its webhooks with, sealed the same way.
-- target:                GitHub: the repository `owner/name`; Linear: the team's id.
-- linear_project_id:     Linear only, optional: new issues go into this project.
-- status_map:            our status -> the tracker's state, and back (src/core/trackers.ts).
-- needs_attention:       why calls stopped (the tracker refused the token); null while it works.
create table tracker_settings (
  integration_id         uuid primary key references integrations (id) on delete cascade,
  token_sealed           text not null,
  webhook_secret_sealed  text not null,
  target                 text not null check (char_length(target) between 1 and 200),
  linear_project_id      text check (char_length(linear_project_id) between 1 and 200),
  status_map             jsonb not null,
  needs_attention        text,
  needs_attention_at     timestamptz
);

-- An item's issue in a tracker: created from the item, or an existing issue linked to it. One
-- issue per item and integration, one item per issue.
-- external_id:    GitHub: the issue number (what its REST API addresses); Linear: the issue's id.
-- issue_key:      what people call it: `#123` or `ENG-42`.
-- state:          the tracker's state as last seen or set (GitHub `open`, `closed`, `not_planned`;
--                 Linear a workflow state id), and its name for display.
-- synced_status:  the status of ours that `state` stands for, as last agreed with the tracker.
--                 A change the tracker made is recorded here in the same transaction, so the
--                 push of our status back out finds nothing to do (the no-loop rule).
-- votes_line:     the votes line (votes and voters' MRR) last written into the issue's
--                 description, and when: votes out writes only a changed line, at most once a
--                 minute per issue.
create table tracker_links (
  id              uuid primary key default gen_random_uuid(),
  project_id      uuid not null references projects (id) on delete cascade,
  feedback_id     uuid not null references feedbacks (id) on delete cascade,
  integration_id  uuid not null references integrations (id) on delete cascade,
  external_id     text not null check (char_length(external_id) between 1 and 200),
  issue_key       text not null check (char_length(issue_key) between 1 and 200),
  url             text not null check (char_length(url) between 1 and 2048),
  title           text not null default '',
  state           text not null,
  state_name      text not null,
  synced_status   text,
  votes_line      text,
  votes_line_at   timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  unique (integration_id, external_id),
  unique (feedback_id, integration_id)
);
create index tracker_links_feedback_idx on tracker_links (feedback_id, created_at);

-- Inbound webhooks, recorded before they are answered and processed after (the worker of
-- src/workers/trackers/): the inbound outbox. One row per delivery: a redelivery (same delivery
-- id) is not recorded again. Only the fields the processing reads are kept, never the payload.
-- outcome: what processing made of it (`status_changed`, `unchanged`, `echo`, `unmapped`,
--          `unlinked`, `ignored`), with detail; null until processed.
-- attempts: failed attempts to apply it; a delivery that keeps failing is set aside (`ignored`,
--          with the error) rather than holding up the ones after it.
create table tracker_inbound (
  id              bigint generated always as identity primary key,
  integration_id  uuid not null references integrations (id) on delete cascade,
  delivery_id     text not null check (char_length(delivery_id) between 1 and 300),
  event           jsonb not null,
  received_at     timestamptz not null default now(),
  processed_at    timestamptz,
  outcome         text,
  detail          text,
  attempts        integer not null default 0,
  unique (integration_id, delivery_id)
);
create index tracker_inbound_pending_idx on tracker_inbound (id) where processed_at is null;
create index tracker_inbound_integration_idx on tracker_inbound (integration_id, id desc);
