import { useEffect, useMemo, useState } from 'preact/hooks';
import { CATEGORY_LABELS, type PanelEnv, STATUS_LABELS } from '../panel-env';
import { type Feedback, refusalText, unwrap } from '../public-api';
import { VoteButton } from './vote-button';

export type ListSort = 'votes' | 'newest';

/**
 * The items, top (most votes) or new, with a title and description search done here: the key
 * list route has no search parameter, and a board holds at most a page of 1000 items.
 */
export function FeedbackList({
  env,
  sort,
  onSort,
  onOpen,
  reloadKey,
  sortControl = true,
}: {
  env: PanelEnv;
  sort: ListSort;
  onSort: (sort: ListSort) => void;
  onOpen: (item: Feedback) => void;
  reloadKey?: unknown;
  /** Off where the page has its own Top/New control (the board's navigation). */
  sortControl?: boolean;
}) {
  const [items, setItems] = useState<Feedback[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [search, setSearch] = useState('');

  useEffect(() => {
    let current = true;
    setProblem(null);
    unwrap(env.api.GET('/feedbacks', { params: { query: { sort } } }))
      .then((rows) => current && setItems(rows))
      .catch((error) => current && setProblem(refusalText(error)));
    return () => {
      current = false;
    };
  }, [env.api, sort, reloadKey]);
  // One view per list shown or sort chosen: a reload because the visitor changed (the host page
  // identified its user while the panel was open) is the same view, not another.
  useEffect(() => env.track('feedback_list', { sort }), [sort]);

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    if (!items || !needle) return items;
    return items.filter((item) => item.title.toLowerCase().includes(needle) || item.description.toLowerCase().includes(needle));
  }, [items, search]);

  const replace = (next: Feedback) => setItems((rows) => rows?.map((row) => (row.id === next.id ? next : row)) ?? null);

  return (
    <section aria-label="Feedback">
      <div class="toolbar">
        {sortControl && (
          <fieldset class="tabs">
            <legend class="visually-hidden">Sort</legend>
            <button type="button" aria-pressed={sort === 'votes'} onClick={() => onSort('votes')}>
              Top
            </button>
            <button type="button" aria-pressed={sort === 'newest'} onClick={() => onSort('newest')}>
              New
            </button>
          </fieldset>
        )}
        <label class="search">
          <span class="visually-hidden">Search feedback</span>
          <input type="search" placeholder="Search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} />
        </label>
      </div>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      {shown === null && !problem && <p class="muted">Loading…</p>}
      {shown?.length === 0 && <p class="muted">{search ? 'Nothing matches your search.' : 'No feedback yet. Be the first.'}</p>}
      <ul class="items">
        {shown?.map((item) => (
          <li key={item.id} class="item">
            <VoteButton env={env} item={item} onChange={replace} />
            <div class="item-body">
              <a
                href={`#${item.id}`}
                class="item-title"
                onClick={(event) => {
                  event.preventDefault();
                  onOpen(item);
                }}
              >
                {item.title}
              </a>
              <p class="item-meta">
                <span class={`status status-${item.status}`}>{STATUS_LABELS[item.status] ?? item.status}</span>
                <span>{CATEGORY_LABELS[item.category] ?? item.category}</span>
                <span>
                  {item.comment_count} {item.comment_count === 1 ? 'comment' : 'comments'}
                </span>
              </p>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
