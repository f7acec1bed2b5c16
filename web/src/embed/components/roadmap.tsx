import { useEffect, useState } from 'preact/hooks';
import { type PanelEnv, STATUS_LABELS } from '../panel-env';
import { type Feedback, type FeedbackStatus, refusalText, unwrap } from '../public-api';

const COLUMNS: FeedbackStatus[] = ['approved', 'in_progress', 'testflight', 'completed'];
/** What an empty column says, so it reads as empty rather than as still loading. */
const EMPTY_COLUMN: Partial<Record<FeedbackStatus, string>> = {
  approved: 'Nothing planned yet.',
  in_progress: 'Nothing in progress right now.',
  testflight: 'Nothing in beta right now.',
  completed: 'Nothing shipped yet.',
};

/** The roadmap: one column per status from approved to completed, most voted first. */
export function Roadmap({ env, itemHref, onOpen }: { env: PanelEnv; itemHref: (id: string) => string; onOpen: (id: string) => void }) {
  const [items, setItems] = useState<Feedback[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => {
    unwrap(env.api.GET('/feedbacks', { params: { query: { sort: 'votes' } } }))
      .then(setItems)
      .catch((error) => setProblem(refusalText(error)));
  }, [env.api]);
  if (problem)
    return (
      <p class="problem" role="alert">
        {problem}
      </p>
    );
  if (!items) return <p class="muted">Loading…</p>;
  return (
    <div class="roadmap">
      {COLUMNS.map((status) => {
        const column = items.filter((item) => item.status === status);
        return (
          <section key={status} class="roadmap-column" aria-labelledby={`column-${status}`}>
            <h2 id={`column-${status}`}>
              {STATUS_LABELS[status]} <span class="muted">({column.length})</span>
            </h2>
            {column.length === 0 && <p class="muted roadmap-empty">{EMPTY_COLUMN[status]}</p>}
            <ul class="items">
              {column.map((item) => (
                <li key={item.id} class="card">
                  <a
                    href={itemHref(item.id)}
                    onClick={(event) => {
                      event.preventDefault();
                      onOpen(item.id);
                    }}
                  >
                    {item.title}
                  </a>
                  <p class="item-meta">
                    {item.vote_count} {item.vote_count === 1 ? 'vote' : 'votes'}
                  </p>
                </li>
              ))}
            </ul>
          </section>
        );
      })}
    </div>
  );
}
