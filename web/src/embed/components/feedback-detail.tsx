import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../../lib/use-action';
import { CATEGORY_LABELS, type PanelEnv, STATUS_LABELS } from '../panel-env';
import { type Comment, type Feedback, refusalText, unwrap } from '../public-api';
import { VoteButton } from './vote-button';

/** One item with its comments; vote and comment. Everything the users wrote is text, never HTML. */
export function FeedbackDetail({ env, id, onBack }: { env: PanelEnv; id: string; onBack: () => void }) {
  const [item, setItem] = useState<Feedback | null>(null);
  const [comments, setComments] = useState<Comment[]>([]);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let current = true;
    const path = { params: { path: { id } } };
    Promise.all([unwrap(env.api.GET('/feedbacks/{id}', path)), unwrap(env.api.GET('/feedbacks/{id}/comments', path))])
      .then(([found, thread]) => {
        if (!current) return;
        setItem(found);
        setComments(thread);
      })
      .catch((error) => current && setProblem(refusalText(error)));
    env.track('feedback_detail', { feedbackId: id });
    return () => {
      current = false;
    };
  }, [env.api, id]);

  return (
    <article class="detail" aria-labelledby="detail-title">
      <button type="button" class="link-button" onClick={onBack}>
        ← All feedback
      </button>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      {!item && !problem && <p class="muted">Loading…</p>}
      {item && (
        <>
          <div class="detail-head">
            <VoteButton env={env} item={item} onChange={setItem} />
            <div>
              <h2 id="detail-title">{item.title}</h2>
              <p class="item-meta">
                <span class={`status status-${item.status}`}>{STATUS_LABELS[item.status] ?? item.status}</span>
                <span>{CATEGORY_LABELS[item.category] ?? item.category}</span>
              </p>
            </div>
          </div>
          <p class="description">{item.description}</p>
          <h3>Comments</h3>
          {comments.length === 0 && <p class="muted">No comments yet.</p>}
          <ul class="comments">
            {comments.map((comment) => (
              <li key={comment.id} class={comment.is_admin ? 'comment from-team' : 'comment'}>
                <p class="comment-author">{comment.is_admin ? 'Team' : comment.user_id}</p>
                <p>{comment.content}</p>
              </li>
            ))}
          </ul>
          <CommentForm
            env={env}
            feedbackId={item.id}
            onPosted={(comment) => {
              setComments((thread) => [...thread, comment]);
              setItem((current) => current && { ...current, comment_count: current.comment_count + 1 });
            }}
          />
        </>
      )}
    </article>
  );
}

function CommentForm({ env, feedbackId, onPosted }: { env: PanelEnv; feedbackId: string; onPosted: (comment: Comment) => void }) {
  const [content, setContent] = useState('');
  const { busy, failure, run } = useAction();
  const problem = failure && refusalText(failure);
  const { visitor } = env;
  if (visitor.kind === 'reader') return <p class="muted">Sign in through the app to comment.</p>;

  async function submit(event: Event) {
    event.preventDefault();
    if (visitor.kind === 'reader' || !content.trim()) return;
    await run(async () => {
      const comment = await unwrap(
        env.api.POST('/feedbacks/{id}/comments', {
          params: { path: { id: feedbackId } },
          body: { content: content.trim(), userId: visitor.userId },
        }),
      );
      setContent('');
      onPosted(comment);
      env.notify('feedback:comment', { feedbackId, commentId: comment.id });
    });
  }

  return (
    <form class="stack" onSubmit={submit}>
      <label>
        Add a comment
        <textarea required maxLength={2000} rows={3} value={content} onInput={(event) => setContent(event.currentTarget.value)} />
      </label>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
      <button type="submit" class="primary" disabled={busy}>
        Comment
      </button>
    </form>
  );
}
