-- Alerts and the weekly digest through the notifications (issue 41, docs/notifications.md
-- "Alerts", "The weekly digest"): an alert's change of state (`alert.firing`, `alert.resolved`),
-- written in the transaction of the check that found it; its "Send test" (`alert.test`), written
-- already dispatched with its deliveries, as an integration's test; a project's weekly digest
-- (`digest.weekly`), written in the transaction of the week's run. The dispatcher expands the
-- others like every notification: the alert's integrations and email, the digest's opted-in
-- recipients, each delivery's unsubscribe_token the recipient's digest_subscriptions token.
alter table notifications drop constraint notifications_type_check;
alter table notifications add constraint notifications_type_check
  check (type in ('feedback.created', 'feedback.status_changed', 'integration.test', 'changelog.published',
                  'alert.firing', 'alert.resolved', 'alert.test', 'digest.weekly'));
