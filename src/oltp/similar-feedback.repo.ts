import type { SqlLike } from './db.js';
import type { FeedbackStatus } from './feedback.row.js';

/** One likely match of a text among a project's items, with how alike they are (0 to 1). */
export type SimilarFeedbackRow = {
  id: string;
  title: string;
  status: FeedbackStatus;
  vote_count: number;
  created_at: Date;
  score: number;
};

export type SimilarSearch = {
  /** Held anonymous submissions of this user stay visible to them (docs/widget.md, "Moderation"). */
  viewer?: string | undefined;
  /** The owner's view: held submissions are the owner's to see. */
  includeHeld?: boolean | undefined;
  /** The item whose duplicates are looked for is never its own. */
  excludeId?: string | undefined;
  limit: number;
};

/** Texts shorter than this answer nothing: two letters resemble half the project. */
export const MIN_SIMILAR_QUERY_LENGTH = 3;

/** A text's words beyond this many add nothing a user types into a title field. */
const MAX_WORDS = 30;
/** Candidates drawn per selective word: enough for a top 5, bounded for a word in every item. */
const CANDIDATES_PER_WORD = 100;
/** Candidates come from the rarest words of the text: a common word selects half the project. */
const SELECTIVE_WORDS = 3;

/**
 * The words of a text, lower-case letters and digits only (no operator of any query syntax), and
 * whether the last one is still being typed (the text does not end after it).
 */
export function wordsOf(text: string): { words: string[]; typing: boolean } {
  const words = (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, MAX_WORDS);
  return { words, typing: /[\p{L}\p{N}]$/u.test(text) };
}

/**
 * Items of the project that resemble `text`, best first (docs/api-guide.md "Similar requests").
 *
 * Each word of the text is first resolved to a word of the project's vocabulary (feedback_lexemes,
 * migration 019): its English stem when an item holds it; else, for the word still being typed,
 * the most common word it begins; else the closest word by trigrams (a typo). A word with no
 * resolution still counts, as rare as a word can be: the user says something no item says.
 *
 * The candidates are the items holding one of the text's rarest resolved words (GIN index on the
 * weighted tsvector), a bounded number per word. Each is scored by the share of the text's words
 * it holds, each word weighed by its rarity (inverse document frequency: ts_rank knows no rarity,
 * and ranked items sharing "task" above the ones sharing "pomodoro"), a word of the title
 * (weight A) counting fully and one of the description (B) 0.6; blended with the title's trigram
 * similarity to the text, which keeps a misspelt or half-typed title close to its item. Weights
 * tuned on test/fixtures/similar-requests.json (test/api/similar-quality.test.ts).
 *
 * Merged sources and rejected items are left out: a duplicate of them should vote on what they
 * became, or not be filed at all.
 */
export async function findSimilarFeedback(
  sql: SqlLike,
  projectId: string,
  text: string,
  search: SimilarSearch,
): Promise<SimilarFeedbackRow[]> {
  const trimmed = text.trim();
  if (trimmed.length < MIN_SIMILAR_QUERY_LENGTH) return [];
  const { words, typing } = wordsOf(text);
  if (words.length === 0) return [];
  const held = search.includeHeld
    ? sql``
    : search.viewer === undefined
      ? sql`and not f.awaiting_approval`
      : sql`and (not f.awaiting_approval or f.user_id = ${search.viewer})`;
  return sql<SimilarFeedbackRow[]>`
    with totals as (
      select coalesce((select items from feedback_search_totals where project_id = ${projectId}), 0)::float8 as n
    ),
    typed as (
      select t.word, t.position, (tsvector_to_array(to_tsvector('english', t.word)))[1] as stem,
             ${typing} and t.position = ${words.length} as partial
      from unnest(${words}::text[]) with ordinality as t(word, position)
    ),
    resolved as (
      select t.position, r.lexeme, coalesce(r.items, 0) as items
      from typed t
      left join lateral (
        (select l.lexeme, l.items from feedback_lexemes l
         where l.project_id = ${projectId} and l.lexeme = t.stem and l.items > 0)
        union all
        (select l.lexeme, l.items from feedback_lexemes l
         where t.partial and l.project_id = ${projectId} and l.lexeme like t.word || '%' and l.items > 0
         order by l.items desc limit 1)
        union all
        (select l.lexeme, l.items from feedback_lexemes l
         where char_length(t.word) >= 4 and l.project_id = ${projectId} and l.lexeme % t.word and l.items > 0
         order by similarity(l.lexeme, t.word) desc limit 1)
        limit 1
      ) r on true
      -- Stop words have no stem; the word being typed may still complete to one of the project's.
      where t.stem is not null or r.lexeme is not null
    ),
    words as (
      select position, lexeme, plainto_tsquery('simple', lexeme) as query,
             ln((totals.n + 1) / (items + 0.5)) as weight
      from resolved, totals
    ),
    candidates as (
      select distinct on (f.id) f.id, f.title, f.status, f.vote_count, f.created_at, f.search_vector,
             ts_filter(f.search_vector, '{a}') as title_vector
      from (select * from words where lexeme is not null order by weight desc limit ${SELECTIVE_WORDS}) w
      cross join lateral (
        select f.* from feedbacks f
        where f.project_id = ${projectId} and f.search_vector @@ w.query
          and f.merged_into_id is null and f.status <> 'rejected' ${held}
          ${search.excludeId === undefined ? sql`` : sql`and f.id <> ${search.excludeId}`}
        limit ${CANDIDATES_PER_WORD}
      ) f
    ),
    scored as (
      select c.id, c.title, c.status, c.vote_count, c.created_at,
             (select sum(w.weight * case when c.title_vector @@ w.query then 1 when c.search_vector @@ w.query then 0.6 else 0 end)
              from words w where w.lexeme is not null) / nullif((select sum(weight) from words), 0) as words,
             similarity(c.title, ${trimmed}) as trigrams
      from candidates c
    )
    select id, title, status, vote_count, created_at,
           least(1, greatest(trigrams, 0.75 * coalesce(words, 0) + 0.25 * trigrams))::float8 as score
    from scored
    order by score desc, vote_count desc, created_at, id
    limit ${search.limit}`;
}
