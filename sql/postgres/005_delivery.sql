-- Delivery of notifications (004): what the workers need beyond the tables of 004.

-- A claimed delivery is leased to one worker until this time. Claiming is one conditional update
-- (status 'pending' and no live lease), so two workers never send the same delivery at once; a
-- worker that dies mid-send leaves a lease that expires, and the delivery is tried again.
alter table deliveries add column locked_until timestamptz;

-- The unsubscribe link of a status-change email (voters and the submitter): the token of the
-- vote, or of the submitter (below), that put this recipient on the list.
alter table deliveries add column unsubscribe_token uuid;

-- Operators list a project's deliveries by status, newest first (GET /projects/:id/deliveries).
create index deliveries_project_list_idx on deliveries (project_id, status, created_at desc, id desc);

-- The submitter's status-change emails (SPEC 4.2 userEmail) have their own unsubscribe link; the
-- submitter has no opt-in flag of their own, so the opt-out lives on the item.
alter table feedbacks add column submitter_notify boolean not null default true;
alter table feedbacks add column submitter_unsubscribe_token uuid not null default gen_random_uuid();
create unique index feedbacks_submitter_unsubscribe_idx on feedbacks (submitter_unsubscribe_token);
create unique index votes_unsubscribe_idx on votes (unsubscribe_token);
