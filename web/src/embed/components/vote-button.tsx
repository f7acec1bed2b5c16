import { useAction } from '../../lib/use-action';
import type { PanelEnv } from '../panel-env';
import { type Feedback, refusalText, unwrap } from '../public-api';

/** Vote or unvote; the visitor's own vote is marked (aria-pressed and the filled style). */
export function VoteButton({ env, item, onChange }: { env: PanelEnv; item: Feedback; onChange: (next: Feedback) => void }) {
  const { busy, failure, run } = useAction();
  const problem = failure && refusalText(failure);
  const { visitor } = env;
  const closed = item.status === 'completed' || item.status === 'rejected';
  const label = `${item.has_voted ? 'Remove your vote from' : 'Vote for'} “${item.title}”, ${item.vote_count} ${item.vote_count === 1 ? 'vote' : 'votes'}`;

  async function toggle() {
    if (visitor.kind === 'reader') return;
    await run(async () => {
      const path = { params: { path: { id: item.id } }, body: { userId: visitor.userId } } as const;
      const result = await unwrap(
        item.has_voted ? env.api.DELETE('/feedbacks/{id}/votes', path) : env.api.POST('/feedbacks/{id}/votes', path),
      );
      onChange({ ...item, vote_count: result.vote_count, has_voted: result.has_voted });
      env.notify('feedback:vote', { feedbackId: item.id, voted: result.has_voted, voteCount: result.vote_count });
    });
  }

  return (
    <div class="vote">
      <button
        type="button"
        class={item.has_voted ? 'vote-button voted' : 'vote-button'}
        aria-pressed={item.has_voted}
        aria-label={label}
        title={visitor.kind === 'reader' ? 'Sign in through the app to vote' : undefined}
        disabled={busy || visitor.kind === 'reader' || (closed && !item.has_voted)}
        onClick={toggle}
      >
        <span aria-hidden="true">▲</span>
        <span>{item.vote_count}</span>
      </button>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
