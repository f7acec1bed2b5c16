-- API processes remember API-key lookups (src/oltp/projects.cache.ts). Whatever changes what such
-- a lookup answers (a rotated key, suspension, archiving, a plan change, a deletion) notifies
-- every process, whichever process or person made the change. The payload is `<kind>:<id>`.
create function notify_auth_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('auth_changes', tg_argv[0] || ':' || old.id::text);
  return null;
end
$$;

create trigger projects_auth_change
  after update of api_key_hash, suspended, archived, account_id or delete on projects
  for each row execute function notify_auth_change('project');

create trigger accounts_auth_change
  after update of plan or delete on accounts
  for each row execute function notify_auth_change('account');
