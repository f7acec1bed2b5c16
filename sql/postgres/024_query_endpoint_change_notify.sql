-- API processes remember the lookup of a published saved query that every call of GET /q/:id
-- needs (its token's hash, the query's text, its settings: src/oltp/saved-query-endpoints.cache.ts).
-- Whatever changes what such a lookup answers notifies every process, whichever process or person
-- made the change: republishing, rotating the token or unpublishing (the endpoint's row), an edit
-- of the query's text or its deletion (the saved query's row; deleting it deletes the endpoint's
-- row too, which notifies as well). The project's and account's changes (suspension, plan) are
-- already notified on `auth_changes` (006_auth_change_notify.sql). The payload is `<kind>:<id>`.
create function notify_query_endpoint_change() returns trigger language plpgsql as $$
begin
  perform pg_notify('query_endpoint_changes', tg_argv[0] || ':' || old.id::text);
  return null;
end
$$;

create trigger saved_query_endpoints_change
  after update or delete on saved_query_endpoints
  for each row execute function notify_query_endpoint_change('endpoint');

create trigger saved_queries_endpoint_change
  after update of sql or delete on saved_queries
  for each row execute function notify_query_endpoint_change('saved_query');
