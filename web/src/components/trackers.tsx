import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { type FeedbackStatus, formatDateTime, STATUS_LABELS, STATUSES } from '../lib/format';
import { integrationName, isTracker, TRACKER_LABELS, type TrackerIntegration, type TrackerKind } from '../lib/integrations';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { CopyButton, Empty, FailureNotice, Loading, OneTimeSecret } from './states';

const TRACKERS_PLAN = 'Issue trackers are integrations: part of the Pro and Team plans.';

/** GitHub's states as a status map names them. */
const GITHUB_STATES = [
  { key: 'open', label: 'Open' },
  { key: 'closed', label: 'Closed (completed)' },
  { key: 'not_planned', label: 'Closed as not planned' },
] as const;
const LINEAR_TYPES = ['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled'] as const;

type Choice = { value: string; label: string };
type WorkflowState = Schemas['LinearWorkflowState'];

/**
 * GitHub and Linear (docs/integrations.md): connect one with a token (the repositories or teams it
 * reaches are offered to pick from), give the tracker the webhook URL and secret shown once, and
 * edit how its states and our statuses correspond. An item's issues are on its page.
 */
export function TrackerIntegrations({ projectId }: { projectId: string }) {
  const list = useResource(
    async () =>
      (await unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } }))).filter(
        (integration): integration is TrackerIntegration => isTracker(integration),
      ),
    [projectId],
  );
  const [connected, setConnected] = useState<{ tracker: TrackerIntegration; secret: string | null } | null>(null);
  return (
    <section class="card" aria-labelledby="trackers-heading">
      <h2 id="trackers-heading">Issue trackers</h2>
      <p class="muted">
        Create a GitHub or Linear issue from an item, or link one: the issue follows the item’s status, and closing it in the tracker sets
        the item’s status and tells its voters. {TRACKERS_PLAN}
      </p>
      {connected && <WebhookSetup tracker={connected.tracker} secret={connected.secret} onDone={() => setConnected(null)} />}
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} planHint={TRACKERS_PLAN} />}
      {list.state === 'loading' && !list.data && <Loading what="issue trackers" />}
      {list.data && list.data.length === 0 && <Empty>No tracker connected yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul class="rows">
          {list.data.map((tracker) => (
            <TrackerRow key={tracker.id} projectId={projectId} tracker={tracker} onChanged={list.reload} />
          ))}
        </ul>
      )}
      <NewTracker
        projectId={projectId}
        onConnected={(tracker, secret) => {
          setConnected({ tracker, secret });
          list.reload();
        }}
      />
    </section>
  );
}

/** What to paste into the tracker's webhook settings, right after connecting. */
function WebhookSetup({ tracker, secret, onDone }: { tracker: TrackerIntegration; secret: string | null; onDone: () => void }) {
  const where =
    tracker.kind === 'github'
      ? 'In the repository’s Settings → Webhooks → Add webhook: this Payload URL, content type application/json, this secret, and the “Issues” events.'
      : 'In Linear’s Settings → API → Webhooks: this URL, with “Issues” data changes; Linear shows its own signing secret, which this integration took.';
  return (
    <section class="notice notice-secret" aria-label="Webhook setup" data-testid="webhook-setup">
      <p>
        <strong>{integrationName(tracker)} is connected.</strong> {where}
      </p>
      <p class="secret-row">
        <code class="secret" data-testid="webhook-url">
          {tracker.webhook_url}
        </code>
        <CopyButton text={tracker.webhook_url} />
      </p>
      {secret ? (
        <OneTimeSecret label="Webhook secret" value={secret} onDone={onDone} />
      ) : (
        <button type="button" onClick={onDone}>
          Done
        </button>
      )}
    </section>
  );
}

/** Connect a tracker: its token, then the repository or team it reaches, picked from the tracker's own list. */
function NewTracker({
  projectId,
  onConnected,
}: {
  projectId: string;
  onConnected: (tracker: TrackerIntegration, secret: string | null) => void;
}) {
  const [kind, setKind] = useState<TrackerKind>('github');
  const [token, setToken] = useState('');
  const [apiUrl, setApiUrl] = useState('');
  const [targets, setTargets] = useState<Choice[] | null>(null);
  const [target, setTarget] = useState('');
  const [signingSecret, setSigningSecret] = useState('');
  const action = useAction();
  const path = { params: { path: { id: projectId } } };
  const tried = { token: token.trim(), ...(apiUrl.trim() ? { apiUrl: apiUrl.trim() } : {}) };

  const find = () =>
    action.run(async () => {
      const found: Choice[] =
        kind === 'github'
          ? (await unwrap(api.POST('/projects/{id}/trackers/github/repositories', { ...path, body: tried }))).map((repository) => ({
              value: repository.full_name,
              label: `${repository.full_name}${repository.private ? ' (private)' : ''}`,
            }))
          : (await unwrap(api.POST('/projects/{id}/trackers/linear/teams', { ...path, body: tried }))).map((team) => ({
              value: team.id,
              label: `${team.name} (${team.key})`,
            }));
      setTargets(found);
      setTarget(found[0]?.value ?? '');
    });
  const connect = (event: Event) => {
    event.preventDefault();
    return action.run(async () => {
      const body: Schemas['CreateIntegrationRequest'] =
        kind === 'github'
          ? { kind, ...tried, repository: target }
          : { kind, ...tried, teamId: target, ...(signingSecret.trim() ? { webhookSecret: signingSecret.trim() } : {}) };
      const created = await unwrap(api.POST('/projects/{id}/integrations', { ...path, body }));
      if (!isTracker(created)) return;
      onConnected(created, 'webhook_secret' in created && created.webhook_secret ? created.webhook_secret : null);
      setToken('');
      setTargets(null);
      setTarget('');
      setSigningSecret('');
    });
  };
  const switchKind = (next: TrackerKind) => {
    setKind(next);
    setTargets(null);
    setTarget('');
  };

  return (
    <form onSubmit={connect} class="stack" aria-label="Connect a tracker">
      <div class="filters">
        <div class="field">
          <label for="tracker-kind">Tracker</label>
          <select id="tracker-kind" value={kind} onChange={(e) => switchKind(e.currentTarget.value as TrackerKind)}>
            <option value="github">GitHub Issues</option>
            <option value="linear">Linear</option>
          </select>
        </div>
        <div class="field field-grow">
          <label for="tracker-token">{kind === 'github' ? 'Fine-grained token (Issues: read and write)' : 'Linear API key'}</label>
          <input
            id="tracker-token"
            type="password"
            autocomplete="off"
            required
            value={token}
            onInput={(e) => {
              setToken(e.currentTarget.value);
              setTargets(null);
            }}
          />
        </div>
        <div class="field field-grow">
          <label for="tracker-api-url">API address (optional)</label>
          <input
            id="tracker-api-url"
            type="url"
            placeholder={kind === 'github' ? 'https://api.github.com' : 'https://api.linear.app/graphql'}
            value={apiUrl}
            onInput={(e) => setApiUrl(e.currentTarget.value)}
          />
        </div>
        <button type="button" onClick={find} disabled={action.busy || token.trim() === ''}>
          {kind === 'github' ? 'Find repositories' : 'Find teams'}
        </button>
      </div>
      {targets && targets.length === 0 && <p>{kind === 'github' ? 'The token reaches no repository.' : 'The key reaches no team.'}</p>}
      {targets && targets.length > 0 && (
        <div class="filters">
          <div class="field field-grow">
            <label for="tracker-target">{kind === 'github' ? 'Repository for new issues' : 'Team for new issues'}</label>
            <select id="tracker-target" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
              {targets.map((choice) => (
                <option value={choice.value} key={choice.value}>
                  {choice.label}
                </option>
              ))}
            </select>
          </div>
          {kind === 'linear' && (
            <div class="field field-grow">
              <label for="tracker-signing-secret">Linear’s webhook signing secret (optional, can be set later)</label>
              <input
                id="tracker-signing-secret"
                type="password"
                value={signingSecret}
                onInput={(e) => setSigningSecret(e.currentTarget.value)}
              />
            </div>
          )}
          <button type="submit" class="primary" disabled={action.busy || target === ''}>
            Connect {TRACKER_LABELS[kind]}
          </button>
        </div>
      )}
      {action.failure && <FailureNotice failure={action.failure} planHint={TRACKERS_PLAN} />}
    </form>
  );
}

function TrackerRow({ projectId, tracker, onChanged }: { projectId: string; tracker: TrackerIntegration; onChanged: () => void }) {
  const [token, setToken] = useState('');
  const action = useAction();
  const change = (body: Schemas['UpdateIntegrationRequest']) =>
    action.run(async () => {
      await unwrap(
        api.PATCH('/projects/{id}/integrations/{integrationId}', { params: { path: { id: projectId, integrationId: tracker.id } }, body }),
      );
      setToken('');
      onChanged();
    });
  const remove = () => {
    if (!window.confirm(`Disconnect ${integrationName(tracker)}? Its issues stay in the tracker, unlinked.`)) return;
    return action.run(async () => {
      await unwrap(
        api.DELETE('/projects/{id}/integrations/{integrationId}', { params: { path: { id: projectId, integrationId: tracker.id } } }),
      );
      onChanged();
    });
  };
  return (
    <li class="row row-stacked" data-testid={`tracker-${tracker.kind}`}>
      <div class="row-main">
        <span>
          <strong>{integrationName(tracker)}</strong> {tracker.needs_attention && <span class="badge badge-danger">needs attention</span>}
          {!tracker.enabled && <span class="badge badge-muted">disabled</span>}
        </span>
        <span class="button-row">
          <button type="button" onClick={() => change({ enabled: !tracker.enabled })} disabled={action.busy}>
            {tracker.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" onClick={remove} disabled={action.busy}>
            Remove
          </button>
        </span>
      </div>
      <p class="secret-row">
        <span class="muted">Webhook URL:</span> <code class="break">{tracker.webhook_url}</code> <CopyButton text={tracker.webhook_url} />
      </p>
      <div class="field field-check">
        <input
          id={`auto-create-${tracker.id}`}
          type="checkbox"
          checked={tracker.auto_create}
          disabled={action.busy}
          onChange={(e) => void change({ autoCreate: e.currentTarget.checked })}
        />
        <label for={`auto-create-${tracker.id}`}>Create an issue for every new item</label>
      </div>
      {tracker.needs_attention && (
        <div class="notice notice-error" role="alert">
          <p>{tracker.needs_attention}. Nothing is sent to the tracker until it gets a new token.</p>
        </div>
      )}
      <form
        class="filters"
        aria-label={`Replace the token of ${integrationName(tracker)}`}
        onSubmit={(event) => {
          event.preventDefault();
          return change({ token: token.trim() });
        }}
      >
        <div class="field field-grow">
          <label for={`token-${tracker.id}`}>New token</label>
          <input
            id={`token-${tracker.id}`}
            type="password"
            autocomplete="off"
            value={token}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
        </div>
        <button type="submit" disabled={action.busy || token.trim() === ''}>
          Replace token
        </button>
      </form>
      <details>
        <summary>Status map</summary>
        <StatusMapEditor projectId={projectId} tracker={tracker} onSaved={onChanged} />
      </details>
      <details>
        <summary>Last webhooks</summary>
        <LastWebhooks projectId={projectId} tracker={tracker} />
      </details>
      {action.failure && <FailureNotice failure={action.failure} planHint={TRACKERS_PLAN} />}
    </li>
  );
}

/**
 * The status map with the tracker's own states: where each of our statuses puts the issue, which
 * status each of the tracker's states gives the item (or none), and on GitHub each status's label.
 */
function StatusMapEditor({ projectId, tracker, onSaved }: { projectId: string; tracker: TrackerIntegration; onSaved: () => void }) {
  const states = useResource(
    () =>
      tracker.kind === 'linear'
        ? unwrap(
            api.POST('/projects/{id}/trackers/linear/workflow-states', {
              params: { path: { id: projectId } },
              body: { integrationId: tracker.id },
            }),
          )
        : Promise.resolve([] as WorkflowState[]),
    [projectId, tracker.id, tracker.kind],
  );
  const [out, setOut] = useState<Record<string, string>>(tracker.status_map.out);
  const [inbound, setInbound] = useState<Record<string, string>>(tracker.status_map.in);
  const [labels, setLabels] = useState<Record<string, string | null>>(tracker.status_map.labels ?? {});
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const team = states.data ?? [];

  const outChoices: Choice[] =
    tracker.kind === 'github'
      ? GITHUB_STATES.map((state) => ({ value: state.key, label: state.label }))
      : [
          ...LINEAR_TYPES.map((type) => ({ value: type, label: `First “${type}” state` })),
          ...team.map((state) => ({ value: state.id, label: state.name })),
        ];
  // What may give the item a status: GitHub's three states; Linear's types, and each state of the team.
  const inRows: Choice[] =
    tracker.kind === 'github'
      ? GITHUB_STATES.map((state) => ({ value: state.key, label: state.label }))
      : [
          ...LINEAR_TYPES.map((type) => ({ value: type, label: `Any “${type}” state` })),
          ...team.map((state) => ({ value: state.id, label: `${state.name} (${state.type})` })),
        ];

  const save = () =>
    action.run(async () => {
      setSaved(false);
      const removed = Object.fromEntries(
        Object.keys(tracker.status_map.in)
          .filter((key) => !(key in inbound))
          .map((key) => [key, null]),
      );
      const statusMap = {
        out,
        in: { ...removed, ...inbound },
        ...(tracker.kind === 'github' ? { labels } : {}),
      } as NonNullable<Schemas['UpdateIntegrationRequest']['statusMap']>;
      await unwrap(
        api.PATCH('/projects/{id}/integrations/{integrationId}', {
          params: { path: { id: projectId, integrationId: tracker.id } },
          body: { statusMap },
        }),
      );
      setSaved(true);
      onSaved();
    });

  return (
    <div class="stack status-map" data-testid={`status-map-${tracker.kind}`}>
      {states.state === 'failed' && <FailureNotice failure={states.failure} onRetry={states.reload} />}
      <table class="data-table">
        <caption>Our status → the issue</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">{TRACKER_LABELS[tracker.kind]} state</th>
            {tracker.kind === 'github' && <th scope="col">Label</th>}
          </tr>
        </thead>
        <tbody>
          {STATUSES.map((status) => (
            <tr key={status}>
              <th scope="row">{STATUS_LABELS[status]}</th>
              <td>
                <select
                  aria-label={`${STATUS_LABELS[status]}: state of the issue`}
                  value={out[status]}
                  onChange={(e) => setOut({ ...out, [status]: e.currentTarget.value })}
                >
                  {withCurrent(outChoices, out[status]).map((choice) => (
                    <option value={choice.value} key={choice.value}>
                      {choice.label}
                    </option>
                  ))}
                </select>
              </td>
              {tracker.kind === 'github' && (
                <td>
                  <input
                    aria-label={`${STATUS_LABELS[status]}: label`}
                    value={labels[status] ?? ''}
                    maxLength={50}
                    onInput={(e) => setLabels({ ...labels, [status]: e.currentTarget.value.trim() || null })}
                  />
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      <table class="data-table">
        <caption>The tracker → our status</caption>
        <thead>
          <tr>
            <th scope="col">{TRACKER_LABELS[tracker.kind]} state</th>
            <th scope="col">Sets the item to</th>
          </tr>
        </thead>
        <tbody>
          {inRows.map((row) => (
            <tr key={row.value}>
              <th scope="row">{row.label}</th>
              <td>
                <select
                  aria-label={`${row.label}: sets the item to`}
                  value={inbound[row.value] ?? ''}
                  onChange={(e) => {
                    const next = { ...inbound };
                    if (e.currentTarget.value === '') delete next[row.value];
                    else next[row.value] = e.currentTarget.value as FeedbackStatus;
                    setInbound(next);
                  }}
                >
                  <option value="">
                    {LINEAR_TYPES.includes(row.value as never) || tracker.kind === 'github' ? 'Nothing (ignored)' : 'As its type'}
                  </option>
                  {STATUSES.map((status) => (
                    <option value={status} key={status}>
                      {STATUS_LABELS[status]}
                    </option>
                  ))}
                </select>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="button-row">
        <button type="button" class="primary" onClick={save} disabled={action.busy}>
          Save status map
        </button>
        <span role="status" class="muted">
          {saved ? 'Saved.' : ''}
        </span>
      </div>
      {action.failure && <FailureNotice failure={action.failure} />}
    </div>
  );
}

/** What the tracker's last webhooks did (GET …/integrations/:integrationId/webhooks): why a change in the tracker changed an item, or not. */
function LastWebhooks({ projectId, tracker }: { projectId: string; tracker: TrackerIntegration }) {
  const list = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/integrations/{integrationId}/webhooks', { params: { path: { id: projectId, integrationId: tracker.id } } }),
      ),
    [projectId, tracker.id],
  );
  return (
    <div class="stack" data-testid={`webhooks-${tracker.kind}`}>
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} />}
      {list.data && list.data.length === 0 && <Empty>No webhook has arrived yet: paste the webhook URL into the tracker.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul class="rows">
          {list.data.map((webhook) => (
            <li key={webhook.id} class="row">
              <span>
                <span class="badge">{webhook.outcome ?? 'waiting'}</span> {webhook.detail ?? ''}
              </span>
              <span class="muted">{formatDateTime(webhook.received_at)}</span>
            </li>
          ))}
        </ul>
      )}
      <button type="button" onClick={list.reload}>
        Refresh
      </button>
    </div>
  );
}

/** The choices, with the current value among them even when the tracker no longer lists it. */
function withCurrent(choices: Choice[], current: string | undefined): Choice[] {
  if (current === undefined || choices.some((choice) => choice.value === current)) return choices;
  return [...choices, { value: current, label: current }];
}
