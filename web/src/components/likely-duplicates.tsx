import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import type { Feedback } from '../lib/feedback';
import { useAction } from '../lib/use-action';
import { FailureNotice } from './states';

type Match = Schemas['SimilarFeedback'];

/** From this score a match is shown as a likely duplicate (docs/dashboard.md, "Likely duplicates"). */
export const LIKELY_DUPLICATE_SCORE = 0.45;
/** The first rows of the view are checked: one request each, a few at a time. */
export const CHECKED_ROWS = 25;
const AT_ONCE = 3;

/**
 * The likely duplicate of each of the first CHECKED_ROWS open items shown (GET
 * /projects/:id/feedbacks/:feedbackId/similar), keyed by item id: the best match from
 * LIKELY_DUPLICATE_SCORE, when there is one. Merged items are not checked.
 */
export function useLikelyDuplicates(projectId: string, items: Feedback[] | undefined): Map<string, Match> {
  const [found, setFound] = useState<Map<string, Match>>(new Map());
  const key = (items ?? []).map((item) => item.id).join(',');
  useEffect(() => {
    let cancelled = false;
    const queue = (items ?? []).filter((item) => !item.merged_into_id).slice(0, CHECKED_ROWS);
    const result = new Map<string, Match>();
    setFound(new Map());
    const worker = async () => {
      for (let item = queue.shift(); item && !cancelled; item = queue.shift()) {
        try {
          const matches = await unwrap(
            api.GET('/projects/{id}/feedbacks/{feedbackId}/similar', { params: { path: { id: projectId, feedbackId: item.id } } }),
          );
          const best = matches[0];
          if (best && best.score >= LIKELY_DUPLICATE_SCORE) result.set(item.id, best);
        } catch {
          // A hint, not the list: a failed check marks nothing.
        }
      }
    };
    void Promise.all(Array.from({ length: AT_ONCE }, worker)).then(() => {
      if (!cancelled) setFound(result);
    });
    return () => {
      cancelled = true;
    };
  }, [projectId, key]);
  return found;
}

/**
 * The mark under an item's title, with the one-click merge: the newer of the two goes into the
 * older (POST …/merge, the existing merge: votes and comments move), so the item people found
 * first keeps its link.
 */
export function DuplicateMark({
  projectId,
  item,
  match,
  onMerged,
}: {
  projectId: string;
  item: Feedback;
  match: Match;
  onMerged: () => void;
}) {
  const { busy, failure, run } = useAction();
  const itemIsOlder = item.created_at < match.created_at || (item.created_at === match.created_at && item.id < match.id);
  const [source, target] = itemIsOlder ? [match.id, item.id] : [item.id, match.id];
  const targetTitle = itemIsOlder ? item.title : match.title;
  const merge = () =>
    run(async () => {
      await unwrap(
        api.POST('/projects/{id}/feedbacks/{feedbackId}/merge', {
          params: { path: { id: projectId, feedbackId: source } },
          body: { intoId: target },
        }),
      );
      onMerged();
    });
  return (
    <div class="duplicate-mark" data-testid="likely-duplicate">
      <span class="badge badge-muted">Likely duplicate</span>{' '}
      <span class="muted">
        of <a href={`/projects/${projectId}/feedback/${match.id}`}>{match.title}</a>
      </span>{' '}
      <button
        type="button"
        class="link-button"
        disabled={busy}
        onClick={merge}
        aria-label={`Merge into older: the newer of the two goes into “${targetTitle}”`}
      >
        Merge into older
      </button>
      {failure && <FailureNotice failure={failure} />}
    </div>
  );
}
