import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../../lib/use-action';
import { CATEGORY_LABELS, type PanelEnv } from '../panel-env';
import { type Feedback, type FeedbackCategory, refusalText, unwrap } from '../public-api';
import { SimilarMatches, useSimilar } from './similar-matches';

/**
 * A new item with a category. `website` is the honeypot: hidden from people (and from assistive
 * technology), filled in by naive bots, refused by the service when not empty. Under the title,
 * the items like it (similar-matches.tsx): voting for one of them instead closes the form
 * (onVoted).
 */
export function SubmitForm({
  env,
  onDone,
  onCancel,
  onVoted,
}: {
  env: PanelEnv;
  onDone: (item: Feedback) => void;
  onCancel: () => void;
  onVoted: (item: Pick<Feedback, 'id' | 'title'>) => void;
}) {
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [category, setCategory] = useState<FeedbackCategory>('feature_request');
  const [website, setWebsite] = useState('');
  const { busy, failure, run } = useAction();
  const problem = failure && refusalText(failure);
  const { visitor } = env;
  const matches = useSimilar(env, title);

  useEffect(() => env.track('submit_feedback', { step: 'opened' }), [env.api]);

  if (visitor.kind === 'reader') return <p class="muted">Sign in through the app to share feedback.</p>;

  async function submit(event: Event) {
    event.preventDefault();
    if (visitor.kind === 'reader') return;
    await run(async () => {
      const body = { title: title.trim(), description: description.trim(), category, userId: visitor.userId, website };
      const item = await unwrap(env.api.POST('/feedbacks', { body }));
      env.notify('feedback:submit', { feedbackId: item.id, title: item.title, category: item.category });
      onDone(item);
    });
  }

  return (
    <form class="stack" onSubmit={submit} aria-labelledby="submit-title">
      <h2 id="submit-title">Share feedback</h2>
      <label>
        Title
        <input required maxLength={200} value={title} onInput={(event) => setTitle(event.currentTarget.value)} />
      </label>
      <SimilarMatches env={env} matches={matches} onVoted={onVoted} />
      <label>
        Description
        <textarea required maxLength={5000} rows={5} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />
      </label>
      <label>
        Category
        <select value={category} onChange={(event) => setCategory(event.currentTarget.value as FeedbackCategory)}>
          {Object.entries(CATEGORY_LABELS).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <div class="honeypot" aria-hidden="true">
        <label>
          Website
          <input
            tabIndex={-1}
            autoComplete="off"
            name="website"
            value={website}
            onInput={(event) => setWebsite(event.currentTarget.value)}
          />
        </label>
      </div>
      {visitor.kind === 'anonymous' && <p class="muted">Anonymous feedback appears once the team has reviewed it.</p>}
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary" disabled={busy}>
          Submit
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
