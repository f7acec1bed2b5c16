-- Issue trackers (issue 42, docs/integrations.md "Out"): "every new item creates an issue".
-- auto_create: a new item of the project gets its issue in this tracker by itself, through a
--              delivery of its `feedback.created` notification (channel `github` or `linear`,
--              recipient the item's id): retried, rate limits honoured, in the delivery log.
alter table tracker_settings add column auto_create boolean not null default false;
