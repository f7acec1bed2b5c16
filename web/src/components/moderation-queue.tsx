import { api, unwrap } from '../api/client';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { FailureNotice } from './states';

/**
 * Anonymous submissions from the public board wait here, out of public view, until an owner
 * approves them (docs/widget.md, "Moderation"). Drawn only while something waits. Titles and
 * descriptions are visitors' text: rendered as text, never HTML.
 */
export function ModerationQueue({ projectId, onApproved }: { projectId: string; onApproved: () => void }) {
  const queue = useResource(() => unwrap(api.GET('/projects/{id}/moderation', { params: { path: { id: projectId } } })), [projectId]);
  const { busy, failure, run } = useAction();
  if (!queue.data || queue.data.length === 0) return null;

  const approve = async (feedbackId: string) => {
    await run(async () => {
      await unwrap(api.POST('/projects/{id}/feedbacks/{feedbackId}/approve', { params: { path: { id: projectId, feedbackId } } }));
      queue.reload();
      onApproved();
    });
  };

  return (
    <section class="card" aria-labelledby="moderation-heading">
      <h2 id="moderation-heading">Awaiting approval ({queue.data.length})</h2>
      <p class="muted">Anonymous submissions from the public board. They appear on the board once approved.</p>
      <ul class="rows">
        {queue.data.map((item) => (
          <li key={item.id} class="row">
            <span>
              <strong class="break">{item.title}</strong>
              <span class="muted break"> {item.description}</span>
            </span>
            <button type="button" onClick={() => approve(item.id)} disabled={busy} aria-label={`Approve “${item.title}”`}>
              Approve
            </button>
          </li>
        ))}
      </ul>
      {failure && <FailureNotice failure={failure} />}
    </section>
  );
}
