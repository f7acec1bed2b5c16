-- Browser origins a project's API key may be used from (issue 22, docs/ingestion.md "Protocol").
-- Empty: any origin (the key is the credential; CORS answers any origin on the client routes).
-- Non-empty: a key-authenticated request whose Origin header is not one of these exact origins
-- (`https://app.example.com`, as browsers send them) is refused with 403. Requests without an
-- Origin header (servers, mobile apps) are not affected.
alter table projects
  add column allowed_origins text[] not null default '{}';

-- API processes remember what an API-key lookup answered (src/oltp/projects.cache.ts), now
-- including allowed_origins: a change of it must reach every process, like a suspension does.
drop trigger projects_auth_change on projects;
create trigger projects_auth_change
  after update of api_key_hash, suspended, archived, account_id, allowed_origins or delete on projects
  for each row execute function notify_auth_change('project');
