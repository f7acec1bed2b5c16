-- occurred_at is taken inside the transaction (clock_timestamp() at the outbox insert), before
-- the commit; the first comment said "commit-time".
ALTER TABLE facts COMMENT COLUMN occurred_at 'time of the change in PostgreSQL: clock_timestamp() at the outbox insert, inside its transaction';
