import { api, type Schemas, unwrap } from '../api/client';
import { formatCount, formatDate } from '../lib/format';
import { formatChange } from '../lib/measures';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { FailureNotice, Loading } from './states';

type Figure = Schemas['DigestPreview']['activity']['events'];

/**
 * The weekly digest (docs/notifications.md "The weekly digest"): the signed-in recipient's own
 * switch (the owner's, or a member's), and the digest of the week so far as Monday's email would
 * say it.
 */
export function DigestSettings({ projectId }: { projectId: string }) {
  const setting = useResource(
    () => unwrap(api.GET('/projects/{id}/digest/settings', { params: { path: { id: projectId } } })),
    [projectId],
  );
  const preview = useResource(() => unwrap(api.GET('/projects/{id}/digest/preview', { params: { path: { id: projectId } } })), [projectId]);
  const action = useAction();
  const toggle = (enabled: boolean) =>
    action.run(async () => {
      await unwrap(api.PUT('/projects/{id}/digest/settings', { params: { path: { id: projectId } }, body: { enabled } }));
      setting.reload();
    });
  const figure = (label: string, f: Figure) => (
    <li key={label}>
      {label}: <strong>{formatCount(f.value)}</strong>{' '}
      <span class="muted">
        (week before: {formatCount(f.previous)}, {formatChange(f.change)})
      </span>
    </li>
  );
  const d = preview.data;
  return (
    <section class="card" aria-labelledby="digest-heading">
      <h2 id="digest-heading">Weekly digest</h2>
      <p class="muted">
        An email each Monday (UTC) about the week before: new feedback, status changes, what shipped, events, users and sessions against the
        week before, and the alerts that fired. Each recipient turns it on or off for themselves; the email has a one-click unsubscribe
        link.
      </p>
      {setting.state === 'failed' && <FailureNotice failure={setting.failure} onRetry={setting.reload} />}
      {setting.data && (
        <div class="field field-check">
          <input
            id="digest-enabled"
            type="checkbox"
            checked={setting.data.enabled}
            disabled={action.busy}
            onChange={(e) => void toggle(e.currentTarget.checked)}
          />
          <label for="digest-enabled">Send me the weekly digest ({setting.data.email})</label>
        </div>
      )}
      {action.failure && <FailureNotice failure={action.failure} />}
      <h3>The week so far</h3>
      {preview.state === 'failed' && <FailureNotice failure={preview.failure} onRetry={preview.reload} />}
      {preview.state === 'loading' && !d && <Loading what="the digest" />}
      {d && (
        <div data-testid="digest-preview">
          <p>
            {formatDate(`${d.week.date_from}T00:00:00Z`)} to {formatDate(`${d.week.date_to}T00:00:00Z`)}:{' '}
            {formatCount(d.feedback.new_count)} new feedback, {formatCount(d.status_changes.count)}{' '}
            {d.status_changes.count === 1 ? 'status change' : 'status changes'}, {formatCount(d.shipped.count)} shipped,{' '}
            {formatCount(d.alerts_fired.length)} alerts fired.
          </p>
          <ul>
            {figure('Events', d.activity.events)}
            {figure('Unique users', d.activity.unique_users)}
            {figure('Sessions', d.activity.sessions)}
          </ul>
          {d.feedback.top_by_votes.length > 0 && (
            <>
              <h4>New feedback with the most votes</h4>
              <ol>
                {d.feedback.top_by_votes.map((item) => (
                  <li key={item.id}>
                    <a href={`/projects/${projectId}/feedback/${item.id}`} class="break">
                      {item.title}
                    </a>{' '}
                    <span class="muted">{formatCount(item.vote_count)} votes</span>
                  </li>
                ))}
              </ol>
            </>
          )}
          <details>
            <summary>The email as text</summary>
            <pre class="digest-text">{d.text}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
