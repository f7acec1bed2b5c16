-- Who wrote a reply posted with the admin token (GET/POST /projects/:id/feedbacks/:feedbackId/comments):
-- the account, and the team member when a member's token was used. SDK comments have neither: their
-- author is the client app's user_id. user_id stays filled for every comment (SPEC 2.5 answers it), and
-- holds `account:<id>` or `member:<id>` for these replies, never a made-up SDK user.
alter table comments
  add column author_account_id uuid references accounts (id) on delete set null,
  add column author_member_id  uuid references project_members (id) on delete set null;
