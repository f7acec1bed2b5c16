-- An owner's "send test" of an integration (POST /projects/:id/integrations/:integrationId/test):
-- a notification of its own type, delivered to that one integration through the same deliveries
-- as any other (retries, the SSRF guard at delivery time, the delivery log), never expanded to
-- other recipients: it is written already dispatched, with its single delivery.
alter table notifications drop constraint notifications_type_check;
alter table notifications add constraint notifications_type_check
  check (type in ('feedback.created', 'feedback.status_changed', 'integration.test'));
