-- A fixed-width user key on events_by_user, computed once per row at insert, for the GROUP BY
-- user of funnels, retention and paths (docs/insights.md). Grouping by the String user_id hashed
-- and compared a string per row; a UInt128 is two machine words (BENCHMARKS.md, "Issue 30:
-- insights at full speed"). sipHash128 is the hash the erasure already matches a user by
-- (src/olap/data-rights/erasure.ts). Why two user ids of one project cannot share a key in any
-- answer: docs/clickhouse.md, "The user key".
-- MATERIALIZED, not DEFAULT: every insert computes it from user_id (the view, the repair of a cut
-- insert, a backfill), none can set it to anything else, and `SELECT *` does not return it.
ALTER TABLE events_by_user ADD COLUMN IF NOT EXISTS user_key UInt128 MATERIALIZED reinterpretAsUInt128(sipHash128(user_id)) COMMENT 'sipHash128(user_id) as a number: the GROUP BY user of the insights' AFTER user_id;

-- The rows stored before: written into their parts now (parts not rewritten yet would compute it
-- on every read, correct but slower). Synchronous, as the backfill of 009 is.
ALTER TABLE events_by_user MATERIALIZE COLUMN user_key SETTINGS mutations_sync = 2;
