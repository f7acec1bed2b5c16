-- Keys and identity for web pages (issue 23, docs/widget.md).
--
-- publishable_key: a second key made to sit in a web page (the widget, the public board). It is
-- public by design, so it is stored as is and shown in GET /projects/:id; it can read feedback,
-- act for a user only with a signed token (or anonymously where allowed), and track events, but
-- never reads metrics or sets MRR. 122 random bits (gen_random_uuid) are plenty for an identifier
-- that is not a secret.
-- identity_secret: the HS256 key the host app's server signs user tokens with. It must be
-- readable to verify signatures, so it is stored as is; it is shown once when (re)created.
-- slug: the public board's address (/board/<slug>), derived from the name and made unique.
alter table projects
  add column publishable_key text not null unique default ('pk_' || replace(gen_random_uuid()::text, '-', '')),
  add column identity_secret text,
  add column require_signed_identity boolean not null default false,
  add column board_public boolean not null default false,
  add column anonymous_feedback boolean not null default false,
  add column slug text unique check (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$');

create function project_slug(name text, id uuid) returns text language sql immutable as $$
  select coalesce(nullif(left(trim(both '-' from regexp_replace(lower(name), '[^a-z0-9]+', '-', 'g')), 48), ''), 'project')
         || '-' || left(replace(id::text, '-', ''), 8)
$$;

update projects set slug = project_slug(name, id);

create function set_project_slug() returns trigger language plpgsql as $$
begin
  if new.slug is null then
    new.slug := project_slug(new.name, new.id);
  end if;
  return new;
end
$$;

create trigger projects_slug before insert on projects
  for each row execute function set_project_slug();

-- A rotated publishable key, or a change of who may act, must reach every process's key cache.
create trigger projects_identity_change
  after update of publishable_key, identity_secret, require_signed_identity, anonymous_feedback, board_public on projects
  for each row execute function notify_auth_change('project');

-- Anonymous submissions from the public board wait for an owner's approval before anyone but the
-- owner sees them (the moderation queue of the dashboard's inbox).
alter table feedbacks add column awaiting_approval boolean not null default false;
create index feedbacks_awaiting_approval_idx on feedbacks (project_id) where awaiting_approval;
