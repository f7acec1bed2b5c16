import { useEffect, useRef, useState } from 'preact/hooks';
import { useAction } from '../../lib/use-action';
import { type PanelEnv, STATUS_LABELS } from '../panel-env';
import { type Feedback, refusalText, type SimilarFeedback, unwrap } from '../public-api';

/** A pause in typing this long sends what was typed: one request per pause, not per key. */
const DEBOUNCE_MS = 300;
const MIN_LENGTH = 3;

/**
 * What the service finds like `text` (GET /feedbacks/similar), fetched while the visitor types:
 * debounced, and never more than one request in flight. A text typed while one is in flight is
 * sent when it answers, and only the latest such text; an answer for an older text than the one
 * now in the field is dropped.
 */
export function useSimilar(env: PanelEnv, text: string): SimilarFeedback[] {
  const [matches, setMatches] = useState<SimilarFeedback[]>([]);
  const inFlight = useRef(false);
  const queued = useRef<string | null>(null);
  const latest = useRef(text);
  latest.current = text;

  useEffect(() => {
    const q = text.trim();
    if (q.length < MIN_LENGTH) {
      setMatches([]);
      return;
    }
    const send = async (value: string): Promise<void> => {
      if (inFlight.current) {
        queued.current = value;
        return;
      }
      inFlight.current = true;
      try {
        const found = await unwrap(env.api.GET('/feedbacks/similar', { params: { query: { q: value } } }));
        if (latest.current.trim() === value) setMatches(found);
      } catch {
        // Suggestions are a help, never in the way: a failure shows none.
      } finally {
        inFlight.current = false;
        const next = queued.current;
        queued.current = null;
        if (next !== null && next !== value) void send(next);
      }
    };
    const timer = setTimeout(() => void send(q), DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [env.api, text]);
  return matches;
}

/**
 * The matches under the title field, each with "Vote for this instead": a vote on the existing
 * item, after which the form closes (onVoted). An item the visitor already voted for, or a
 * closed one, is opened instead.
 */
export function SimilarMatches({
  env,
  matches,
  onVoted,
}: {
  env: PanelEnv;
  matches: SimilarFeedback[];
  onVoted: (item: Pick<Feedback, 'id' | 'title'>) => void;
}) {
  const { busy, failure, run } = useAction();
  const problem = failure && refusalText(failure);
  const { visitor } = env;
  if (matches.length === 0 || visitor.kind === 'reader') return null;

  async function voteFor(match: SimilarFeedback) {
    if (visitor.kind === 'reader') return;
    await run(async () => {
      const result = await unwrap(
        env.api.POST('/feedbacks/{id}/votes', { params: { path: { id: match.id } }, body: { userId: visitor.userId } }),
      );
      env.notify('feedback:vote', { feedbackId: match.id, voted: result.has_voted, voteCount: result.vote_count });
      onVoted(match);
    });
  }

  return (
    <section class="similar" aria-label="Similar requests" aria-live="polite">
      <p class="muted">Already asked? Vote for it instead of filing it twice:</p>
      <ul class="similar-list">
        {matches.map((match) => (
          <li key={match.id} class="similar-item">
            <span class="similar-title">{match.title}</span>
            <span class="muted">
              {STATUS_LABELS[match.status] ?? match.status} · {match.vote_count} {match.vote_count === 1 ? 'vote' : 'votes'}
            </span>
            <button
              type="button"
              disabled={busy || match.status === 'completed'}
              onClick={() => voteFor(match)}
              aria-label={`Vote for “${match.title}” instead`}
            >
              Vote for this instead
            </button>
          </li>
        ))}
      </ul>
      {problem && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
    </section>
  );
}
