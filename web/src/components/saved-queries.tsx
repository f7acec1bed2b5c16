import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { ApiFailure } from '../api/failure';
import { formatCount, formatDateTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { type Resource, useResource } from '../lib/use-resource';
import { Empty, FailureNotice, Loading } from './states';

/*
 * The SQL console's saved queries (save, open, delete) and, per query, its API endpoint: publish
 * it with typed parameters, rotate its token, unpublish it, and the calls it answered
 * (docs/project-sql.md, "A saved query becomes an API endpoint").
 */

type SavedQuery = Schemas['SavedQuery'];

export function SavedQueries({
  projectId,
  saved,
  text,
  onOpen,
  busy,
}: {
  projectId: string;
  saved: Resource<SavedQuery[]>;
  text: string;
  onOpen: (sql: string, andRun: boolean) => void;
  busy: boolean;
}) {
  const [name, setName] = useState('');
  const action = useAction();
  const save = () =>
    action.run(async () => {
      await unwrap(
        api.POST('/projects/{id}/saved-queries', { params: { path: { id: projectId } }, body: { name: name.trim(), sql: text } }),
      );
      setName('');
      saved.reload();
    });
  const remove = (query: SavedQuery) => {
    if (!window.confirm(`Delete the saved query “${query.name}”?`)) return;
    void action.run(async () => {
      await unwrap(api.DELETE('/projects/{id}/saved-queries/{queryId}', { params: { path: { id: projectId, queryId: query.id } } }));
      saved.reload();
    });
  };
  return (
    <section class="card" aria-labelledby="saved-heading">
      <h2 id="saved-heading">Saved queries</h2>
      <form
        class="filters"
        aria-label="Save the query"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div class="field field-grow">
          <label for="saved-name">Name</label>
          <input id="saved-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <button type="submit" disabled={action.busy || text.trim() === ''}>
          Save query
        </button>
        <p class="muted field-note">Saves the editor's query for everyone with access to this project.</p>
      </form>
      {action.failure && <FailureNotice failure={action.failure} />}
      {saved.state === 'failed' && <FailureNotice failure={saved.failure} onRetry={saved.reload} />}
      {saved.state === 'loading' && !saved.data && <Loading what="saved queries" />}
      {saved.data && saved.data.length === 0 && <Empty>No saved query yet.</Empty>}
      {saved.data && saved.data.length > 0 && (
        <ul class="rows" aria-label="Saved queries">
          {saved.data.map((query) => (
            <li key={query.id} class="row row-stacked">
              <div class="row-main">
                <span>
                  <strong>{query.name}</strong>{' '}
                  <span class="muted">
                    by {query.created_by}, {formatDateTime(query.created_at)}
                  </span>
                </span>
                <span class="button-row">
                  <button type="button" onClick={() => onOpen(query.sql, false)}>
                    Open<span class="visually-hidden"> {query.name}</span>
                  </button>
                  <button type="button" onClick={() => onOpen(query.sql, true)} disabled={busy}>
                    Run<span class="visually-hidden"> {query.name}</span>
                  </button>
                  <button type="button" class="link-button" onClick={() => remove(query)} disabled={action.busy}>
                    Delete<span class="visually-hidden"> {query.name}</span>
                  </button>
                </span>
              </div>
              <code class="sql-snippet">{query.sql}</code>
              <EndpointPanel projectId={projectId} query={query} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

type Endpoint = Schemas['QueryEndpoint'];
type NewEndpoint = Schemas['NewQueryEndpoint'];

/**
 * A saved query as an HTTP endpoint (docs/project-sql.md, "Endpoints"): read when opened, then
 * "Publish as endpoint", its URL, a curl line and a fetch snippet, the latest calls, a new token,
 * unpublishing. The token is on screen only from the answer that made it.
 */
function EndpointPanel({ projectId, query }: { projectId: string; query: SavedQuery }) {
  const [opened, setOpened] = useState(false);
  const [token, setToken] = useState<string | null>(null);
  const action = useAction();
  const path = { params: { path: { id: projectId, queryId: query.id } } };
  const endpoint = useResource(async (): Promise<Endpoint | null> => {
    if (!opened) return null;
    try {
      return await unwrap(api.GET('/projects/{id}/saved-queries/{queryId}/endpoint', path));
    } catch (error) {
      // Not published (or the saved query went): nothing to show but the button.
      if (error instanceof ApiFailure && error.status === 404) return null;
      throw error;
    }
  }, [opened, projectId, query.id]);
  const calls = useResource(
    async () => (opened && endpoint.data ? unwrap(api.GET('/projects/{id}/saved-queries/{queryId}/endpoint/calls', path)) : []),
    [opened, endpoint.data?.id, token],
  );
  const made = (answer: NewEndpoint) => {
    setToken(answer.token);
    endpoint.reload();
  };
  const publish = () =>
    action.run(async () => made(await unwrap(api.POST('/projects/{id}/saved-queries/{queryId}/endpoint', { ...path, body: {} }))));
  const rotate = () => action.run(async () => made(await unwrap(api.POST('/projects/{id}/saved-queries/{queryId}/endpoint/token', path))));
  const unpublish = () => {
    if (!window.confirm(`Unpublish “${query.name}”? Its URL stops answering.`)) return;
    void action.run(async () => {
      await unwrap(api.DELETE('/projects/{id}/saved-queries/{queryId}/endpoint', path));
      setToken(null);
      endpoint.reload();
    });
  };
  const published = endpoint.data ?? null;
  const shownToken = token ?? '$ENDPOINT_TOKEN';
  const search =
    published && published.params.length > 0 ? `?${published.params.map((p) => `${p.name}=${p.default ?? '…'}`).join('&')}` : '';
  return (
    <details class="endpoint-panel" onToggle={(e) => setOpened((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>API endpoint</summary>
      {action.failure && <FailureNotice failure={action.failure} />}
      {endpoint.state === 'failed' && <FailureNotice failure={endpoint.failure} onRetry={endpoint.reload} />}
      {opened && endpoint.state === 'loading' && !endpoint.data && <Loading what="the endpoint" />}
      {opened && endpoint.state !== 'loading' && !published && (
        <p>
          <button type="button" onClick={() => void publish()} disabled={action.busy}>
            Publish as endpoint
          </button>{' '}
          <span class="muted">An HTTP URL that runs this query with a read token, for your own app.</span>
        </p>
      )}
      {published && (
        <>
          <p>
            <code>GET {published.url}</code>
          </p>
          {token && (
            <p role="status">
              Read token, shown only now: <code>{token}</code>
            </p>
          )}
          <p class="muted field-note">With curl:</p>
          <pre class="sql-snippet">{`curl -H "Authorization: Bearer ${shownToken}" '${published.url}${search}'`}</pre>
          <p class="muted field-note">From JavaScript:</p>
          <pre class="sql-snippet">
            {`const answer = await fetch('${published.url}${search}', {\n  headers: { Authorization: 'Bearer ${shownToken}' },\n});\nconst { data, meta, rows } = await answer.json();`}
          </pre>
          <p class="button-row">
            <button type="button" onClick={() => void rotate()} disabled={action.busy}>
              New token
            </button>
            <button type="button" class="link-button" onClick={unpublish} disabled={action.busy}>
              Unpublish
            </button>
          </p>
          <h3>Latest calls</h3>
          {calls.data && calls.data.length === 0 && <Empty>No call yet.</Empty>}
          {calls.data && calls.data.length > 0 && (
            <ul class="rows" aria-label={`Calls of ${query.name}`}>
              {calls.data.slice(0, 10).map((call) => (
                <li key={call.called_at} class="row">
                  <span class="muted">{formatDateTime(call.called_at)}</span>
                  <span>
                    {call.status} · {call.rows === null ? '–' : `${formatCount(call.rows)} rows`} · {Math.round(call.duration_ms)} ms
                    {call.cached ? ' · cached' : ''} · {call.format}
                  </span>
                </li>
              ))}
            </ul>
          )}
        </>
      )}
    </details>
  );
}
