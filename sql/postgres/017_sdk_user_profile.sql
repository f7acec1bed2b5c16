-- The email and display name an SDK user registers with (docs/clients.md): the origin project's
-- Kotlin SDK registers `{ email, name, external_id, metadata }`. Both optional and private: shown
-- to the project's owner (GET /projects/:id/users) and to the user's own signed token
-- (GET /users/:userId), never to a holder of the API key alone. Erasure deletes the row with them.
alter table sdk_users
  add column email text check (char_length(email) <= 320),
  add column name text check (char_length(name) <= 200);
