-- Publishing a changelog entry tells the people who asked (issue 40, docs/notifications.md
-- "Changelog entries"): one `changelog.published` notification per entry, written in the publish
-- transaction, expanded by the workers like every other notification.

-- Whether publishing moves the linked items to `completed` in the same transaction; kept on the
-- entry so a scheduled entry does it when the scheduler publishes it.
alter table changelog_entries add column complete_linked boolean not null default false;

alter table notifications drop constraint notifications_type_check;
alter table notifications add constraint notifications_type_check
  check (type in ('feedback.created', 'feedback.status_changed', 'integration.test', 'changelog.published'));

-- The entry a `changelog.published` notification announces. At most one per entry, whatever
-- republishes, retries or concurrent schedulers do: the database refuses a second. The
-- notification and its deliveries are the entry's "who was told", so they live as long as the
-- entry (not pruned after 30 days) and go with it: deleting an entry also stops its pending sends.
alter table notifications add column changelog_entry_id uuid references changelog_entries (id) on delete cascade;
create unique index notifications_changelog_entry_idx on notifications (changelog_entry_id) where changelog_entry_id is not null;

-- A changelog email is about several items: its unsubscribe link is a token of the delivery's own
-- (stopping the status emails of every item the email named), looked up by the unsubscribe route.
create index deliveries_unsubscribe_token_idx on deliveries (unsubscribe_token) where unsubscribe_token is not null;
