import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { integrationName, isTracker, TRACKER_LABELS, type TrackerIntegration } from '../lib/integrations';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { FailureNotice, Loading } from './states';

/**
 * An item's issues in GitHub or Linear: each with its number or key, its state as last seen and a
 * link to it; "Create issue" makes one from the item, "Link issue" links an existing one
 * (`#123`, its URL, `ENG-42`), "Unlink" leaves the issue as it is.
 */
export function LinkedIssues({ projectId, feedbackId, onChanged }: { projectId: string; feedbackId: string; onChanged: () => void }) {
  const path = { id: projectId, feedbackId };
  const links = useResource(
    () => unwrap(api.GET('/projects/{id}/feedbacks/{feedbackId}/issues', { params: { path } })),
    [projectId, feedbackId],
  );
  const trackers = useResource(
    async () =>
      (await unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } })).catch(() => [])).filter(
        (integration): integration is TrackerIntegration => isTracker(integration) && integration.enabled,
      ),
    [projectId],
  );
  const [chosen, setChosen] = useState('');
  const [reference, setReference] = useState('');
  const action = useAction();
  const available = (trackers.data ?? []).filter((tracker) => !(links.data ?? []).some((link) => link.integration_id === tracker.id));
  const integrationId = available.some((tracker) => tracker.id === chosen) ? chosen : (available[0]?.id ?? '');
  const nameOf = (id: string) => {
    const tracker = trackers.data?.find((entry) => entry.id === id);
    return tracker ? integrationName(tracker) : 'a removed tracker';
  };

  const create = (issue?: string) =>
    action.run(async () => {
      await unwrap(
        api.POST('/projects/{id}/feedbacks/{feedbackId}/issues', {
          params: { path },
          body: issue === undefined ? { integrationId } : { integrationId, issue },
        }),
      );
      setReference('');
      links.reload();
      onChanged();
    });
  const unlink = (linkId: string, key: string) => {
    if (!window.confirm(`Unlink ${key}? The issue stays as it is in the tracker.`)) return;
    return action.run(async () => {
      await unwrap(api.DELETE('/projects/{id}/feedbacks/{feedbackId}/issues/{linkId}', { params: { path: { ...path, linkId } } }));
      links.reload();
    });
  };

  return (
    <section class="card" aria-labelledby="issues-heading">
      <h2 id="issues-heading">Issues</h2>
      {links.state === 'failed' && <FailureNotice failure={links.failure} onRetry={links.reload} />}
      {links.state === 'loading' && !links.data && <Loading what="linked issues" />}
      {links.data && links.data.length > 0 && (
        <ul class="rows" aria-label="Linked issues">
          {links.data.map((link) => (
            <li key={link.id} class="row" data-testid="linked-issue">
              <span>
                <a href={link.url} target="_blank" rel="noreferrer">
                  {TRACKER_LABELS[link.kind]} {link.key}
                </a>{' '}
                <span class="badge" data-testid="linked-issue-state">
                  {link.state_name}
                </span>{' '}
                <span class="muted">
                  {link.title} · {nameOf(link.integration_id)}
                </span>
              </span>
              <button type="button" class="link-button" onClick={() => unlink(link.id, link.key)} disabled={action.busy}>
                Unlink
              </button>
            </li>
          ))}
        </ul>
      )}
      {trackers.data && trackers.data.length === 0 && (
        <p class="muted">
          No tracker connected: connect GitHub or Linear in <a href={`/projects/${projectId}/settings`}>Settings</a>.
        </p>
      )}
      {available.length > 0 && (
        <div class="stack">
          {available.length > 1 && (
            <div class="field">
              <label for="issue-tracker">Tracker</label>
              <select id="issue-tracker" value={integrationId} onChange={(e) => setChosen(e.currentTarget.value)}>
                {available.map((tracker) => (
                  <option value={tracker.id} key={tracker.id}>
                    {integrationName(tracker)}
                  </option>
                ))}
              </select>
            </div>
          )}
          <div class="button-row">
            <button type="button" class="primary" onClick={() => create()} disabled={action.busy || integrationId === ''}>
              Create issue
            </button>
          </div>
          <form
            class="filters"
            aria-label="Link an existing issue"
            onSubmit={(event) => {
              event.preventDefault();
              if (reference.trim()) return create(reference.trim());
            }}
          >
            <div class="field field-grow">
              <label for="issue-reference">Existing issue (#123, ENG-42 or its URL)</label>
              <input id="issue-reference" value={reference} onInput={(e) => setReference(e.currentTarget.value)} />
            </div>
            <button type="submit" disabled={action.busy || reference.trim() === '' || integrationId === ''}>
              Link issue
            </button>
          </form>
        </div>
      )}
      {action.failure && <FailureNotice failure={action.failure} />}
    </section>
  );
}
