-- Out: from an item to its linked issues (issue 42, docs/integrations.md "Out"), through the
-- notification outbox and its deliveries like every other message: retries with backoff,
-- Retry-After, the delivery log.
-- - A status change of an item with linked issues gets one delivery per linked issue, channel
--   `github` or `linear`, recipient the link's id: the issue follows the status map's `out`.
-- - `feedback.votes_changed`, written in the transaction of a vote added or removed on an item
--   that has linked issues, gets the same: the issue's votes line follows. It reaches trackers
--   only (never an email, a Slack, Discord or webhook integration), and no second one is made for
--   a link that has one pending: the pending one reads the item when it is sent.
alter table notifications drop constraint notifications_type_check;
alter table notifications add constraint notifications_type_check
  check (type in ('feedback.created', 'feedback.status_changed', 'integration.test', 'changelog.published',
                  'alert.firing', 'alert.resolved', 'alert.test', 'digest.weekly', 'feedback.votes_changed'));

alter table deliveries drop constraint deliveries_channel_check;
alter table deliveries add constraint deliveries_channel_check
  check (channel in ('email', 'slack', 'discord', 'webhook', 'github', 'linear'));

-- The pending tracker deliveries of a link: the dispatcher's "one pending votes update" check.
create index deliveries_tracker_pending_idx on deliveries (recipient) where status = 'pending' and channel in ('github', 'linear');
