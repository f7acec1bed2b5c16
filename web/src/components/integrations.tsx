import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import {
  EVENT_LABELS,
  type Integration,
  type IntegrationKind,
  integrationName,
  isTracker,
  KIND_LABELS,
  NOTIFICATION_TYPES,
  type NotificationType,
} from '../lib/integrations';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { SendTest } from './send-test';
import { Empty, FailureNotice, Loading, OneTimeSecret } from './states';

export const INTEGRATIONS_PLAN = 'Integrations are part of the Pro and Team plans.';

/** The project's integrations (Slack, Discord, a signed webhook): added, given their notification types, tested, switched on or off, removed. */
export function Integrations({ projectId }: { projectId: string }) {
  // The trackers (GitHub, Linear) have their own section (trackers.tsx).
  const list = useResource(
    async () =>
      (await unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } }))).filter(
        (integration): integration is Integration => !isTracker(integration),
      ),
    [projectId],
  );
  const [kind, setKind] = useState<IntegrationKind>('slack');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<NotificationType[] | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();

  const create = (event: Event) => {
    event.preventDefault();
    return action.run(async () => {
      const created = await unwrap(
        api.POST('/projects/{id}/integrations', { params: { path: { id: projectId } }, body: { kind, url: url.trim(), events } }),
      );
      if ('secret' in created && created.secret) setSecret(created.secret);
      setUrl('');
      setEvents(null);
      list.reload();
    });
  };
  const change = (integration: Integration, body: Schemas['UpdateIntegrationRequest']) =>
    action.run(async () => {
      await unwrap(
        api.PATCH('/projects/{id}/integrations/{integrationId}', {
          params: { path: { id: projectId, integrationId: integration.id } },
          body,
        }),
      );
      list.reload();
    });
  const remove = (integration: Integration) => {
    if (!window.confirm(`Remove the ${KIND_LABELS[integration.kind]} integration to ${integration.url}?`)) return;
    return action.run(async () => {
      await unwrap(
        api.DELETE('/projects/{id}/integrations/{integrationId}', { params: { path: { id: projectId, integrationId: integration.id } } }),
      );
      list.reload();
    });
  };

  return (
    <section class="card" aria-labelledby="integrations-heading">
      <h2 id="integrations-heading">Integrations</h2>
      <p class="muted">New feedback and status changes are posted to Slack, Discord or a signed webhook. {INTEGRATIONS_PLAN}</p>
      {secret && <OneTimeSecret label="Webhook signing secret" value={secret} onDone={() => setSecret(null)} />}
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} planHint={INTEGRATIONS_PLAN} />}
      {list.state === 'loading' && !list.data && <Loading what="integrations" />}
      {list.data && list.data.length === 0 && <Empty>No integration yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul class="rows">
          {list.data.map((integration) => (
            <li key={integration.id} class="row row-stacked">
              <div class="row-main">
                <span>
                  <strong>{integrationName(integration)}</strong> <span class="break muted">{integration.url}</span>{' '}
                  {!integration.enabled && <span class="badge badge-muted">disabled</span>}
                </span>
                <span class="button-row">
                  <SendTest projectId={projectId} integration={integration} />
                  <button type="button" onClick={() => change(integration, { enabled: !integration.enabled })} disabled={action.busy}>
                    {integration.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <button type="button" onClick={() => remove(integration)} disabled={action.busy}>
                    Remove
                  </button>
                </span>
              </div>
              <EventChoice
                legend={`What ${integrationName(integration)} receives`}
                idPrefix={`events-${integration.id}`}
                value={integration.events}
                disabled={action.busy}
                onChange={(next) => change(integration, { events: next })}
              />
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={create} class="filters" aria-label="Add an integration">
        <div class="field">
          <label for="integration-kind">Kind</label>
          <select id="integration-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as IntegrationKind)}>
            {(Object.keys(KIND_LABELS) as IntegrationKind[]).map((value) => (
              <option value={value} key={value}>
                {KIND_LABELS[value]}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-grow">
          <label for="integration-url">URL</label>
          <input
            id="integration-url"
            type="url"
            required
            placeholder="https://"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </div>
        <EventChoice legend="It receives" idPrefix="new-integration-events" value={events} onChange={setEvents} />
        <button type="submit" class="primary" disabled={action.busy}>
          Add integration
        </button>
      </form>
      {action.failure && <FailureNotice failure={action.failure} planHint={INTEGRATIONS_PLAN} />}
    </section>
  );
}

/**
 * Which notification types an integration receives: every type (null: also types added later),
 * or a non-empty choice (the API refuses an empty one, so the last box cannot be unticked).
 */
function EventChoice({
  legend,
  idPrefix,
  value,
  disabled,
  onChange,
}: {
  legend: string;
  idPrefix: string;
  value: NotificationType[] | null;
  disabled?: boolean;
  onChange: (next: NotificationType[] | null) => void;
}) {
  const chosen = value ?? NOTIFICATION_TYPES;
  const toggle = (type: NotificationType, on: boolean) => {
    const next = NOTIFICATION_TYPES.filter((t) => (t === type ? on : chosen.includes(t)));
    // Every type ticked means "everything", later types included: the API's null.
    onChange(next.length === NOTIFICATION_TYPES.length ? null : next);
  };
  return (
    <fieldset class="event-choice">
      <legend>{legend}</legend>
      {NOTIFICATION_TYPES.map((type) => {
        const on = chosen.includes(type);
        return (
          <span class="field-check" key={type}>
            <input
              id={`${idPrefix}-${type}`}
              type="checkbox"
              checked={on}
              disabled={disabled || (on && chosen.length === 1)}
              onChange={(e) => toggle(type, e.currentTarget.checked)}
            />
            <label for={`${idPrefix}-${type}`}>{EVENT_LABELS[type]}</label>
          </span>
        );
      })}
      <span class="muted event-choice-note">{value === null ? 'Everything, also types added later.' : 'Only these.'}</span>
    </fieldset>
  );
}
