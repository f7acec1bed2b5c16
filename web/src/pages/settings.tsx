import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { Exports } from '../components/exports';
import { Page } from '../components/layout';
import { ScrollRegion } from '../components/scroll-region';
import { SendTest } from '../components/send-test';
import { Empty, FailureNotice, Loading, OneTimeSecret, PlanGate } from '../components/states';
import { WebSettings } from '../components/web-settings';
import { type Account, PLAN_LABELS, useAccount } from '../lib/account';
import { formatDateTime } from '../lib/format';
import {
  attempts,
  EVENT_LABELS,
  type Integration,
  type IntegrationKind,
  integrationName,
  KIND_LABELS,
  NOTIFICATION_TYPES,
  type NotificationType,
} from '../lib/integrations';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

const INTEGRATIONS_PLAN = 'Integrations are part of the Pro and Team plans.';
const MEMBERS_PLAN = 'Team members are part of the Team plan.';

export function SettingsPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const account = useAccount();
  return (
    <Page title="Settings" projectId={projectId}>
      <WebSettings projectId={projectId} />
      {account && !account.limits.integrations ? (
        <GatedSection heading="Integrations" account={account} reason={INTEGRATIONS_PLAN} />
      ) : (
        <Integrations projectId={projectId} />
      )}
      {account && !account.limits.team_members ? (
        <GatedSection heading="Team members" account={account} reason={MEMBERS_PLAN} />
      ) : (
        <Members projectId={projectId} />
      )}
      <Deliveries projectId={projectId} />
      <Exports projectId={projectId} />
    </Page>
  );
}

/**
 * A section the account's plan leaves out, explained before anything is tried (GET /account):
 * no form that could only end in a 402. Until the account is known the section is drawn, and the
 * API's 402 explains it.
 */
function GatedSection({ heading, account, reason }: { heading: string; account: Account; reason: string }) {
  const id = `${heading.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <PlanGate reason={`${reason.replace(/\.$/, '')}; this account is on the ${PLAN_LABELS[account.plan]} plan`} />
    </section>
  );
}

function Integrations({ projectId }: { projectId: string }) {
  const list = useResource(() => unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } })), [projectId]);
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

function Members({ projectId }: { projectId: string }) {
  const list = useResource(() => unwrap(api.GET('/projects/{id}/members', { params: { path: { id: projectId } } })), [projectId]);
  const [email, setEmail] = useState('');
  const [token, setToken] = useState<{ email: string; value: string } | null>(null);
  const action = useAction();

  const add = (event: Event) => {
    event.preventDefault();
    return action.run(async () => {
      const member = await unwrap(
        api.POST('/projects/{id}/members', { params: { path: { id: projectId } }, body: { email: email.trim() } }),
      );
      setToken({ email: member.email, value: member.admin_token });
      setEmail('');
      list.reload();
    });
  };
  const remove = (member: Schemas['Member']) => {
    if (!window.confirm(`Remove ${member.email}? Their token stops working at once.`)) return;
    return action.run(async () => {
      await unwrap(api.DELETE('/projects/{id}/members/{memberId}', { params: { path: { id: projectId, memberId: member.id } } }));
      list.reload();
    });
  };

  return (
    <section class="card" aria-labelledby="members-heading">
      <h2 id="members-heading">Team members</h2>
      <p class="muted">Each member gets a token of their own to sign in here and to call the API. {MEMBERS_PLAN}</p>
      {token && <OneTimeSecret label={`Token for ${token.email}`} value={token.value} onDone={() => setToken(null)} />}
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} planHint={MEMBERS_PLAN} />}
      {list.state === 'loading' && !list.data && <Loading what="members" />}
      {list.data && list.data.length === 0 && <Empty>No team member yet.</Empty>}
      {list.data && list.data.length > 0 && (
        <ul class="rows">
          {list.data.map((member) => (
            <li key={member.id} class="row">
              <span>
                {member.email} <span class="muted">since {formatDateTime(member.created_at)}</span>
              </span>
              <button type="button" onClick={() => remove(member)} disabled={action.busy}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} class="filters" aria-label="Add a team member">
        <div class="field field-grow">
          <label for="member-email">Email</label>
          <input id="member-email" type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </div>
        <button type="submit" class="primary" disabled={action.busy}>
          Add member
        </button>
      </form>
      {action.failure && <FailureNotice failure={action.failure} planHint={MEMBERS_PLAN} />}
    </section>
  );
}

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
const DELIVERY_TYPE_LABELS: Record<Schemas['Delivery']['type'], string> = {
  'feedback.created': 'New feedback',
  'feedback.status_changed': 'Status change',
  'integration.test': 'Test message',
};

function Deliveries({ projectId }: { projectId: string }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const list = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/deliveries', { params: { path: { id: projectId }, query: { limit: 50, ...(status ? { status } : {}) } } }),
      ),
    [projectId, status],
  );
  // Integrations name the deliveries' targets; on a plan without them the list stays empty.
  const integrations = useResource(
    () => unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } })).catch(() => [] as Integration[]),
    // Read again with each list: a delivery may be to an integration added since.
    [projectId, list.data],
  );
  const action = useAction();
  const retry = (delivery: Schemas['Delivery']) =>
    action.run(async () => {
      await unwrap(
        api.POST('/projects/{id}/deliveries/{deliveryId}/retry', { params: { path: { id: projectId, deliveryId: delivery.id } } }),
      );
      list.reload();
    });
  const target = (delivery: Schemas['Delivery']) => {
    if (delivery.channel === 'email') return `Email to ${delivery.recipient}`;
    const integration = integrations.data?.find((i) => i.id === delivery.integration_id);
    if (integration) return integrationName(integration);
    return `${KIND_LABELS[delivery.channel]} (integration removed)`;
  };

  return (
    <section class="card" aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Notification deliveries</h2>
      <div class="filters">
        <div class="field">
          <label for="delivery-status">Show</label>
          <select id="delivery-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as DeliveryStatus | '')}>
            <option value="">All deliveries</option>
            {DELIVERY_STATUSES.map((value) => (
              <option value={value} key={value}>
                {value[0]?.toUpperCase()}
                {value.slice(1)}
              </option>
            ))}
          </select>
        </div>
      </div>
      {list.state === 'failed' && <FailureNotice failure={list.failure} onRetry={list.reload} />}
      {list.state === 'loading' && !list.data && <Loading what="deliveries" />}
      {list.data && list.data.length === 0 && <Empty>No delivery{status ? ` with status ${status}` : ''}.</Empty>}
      {list.data && list.data.length > 0 && (
        <ScrollRegion label="Deliveries">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.map((delivery) => (
                <tr key={delivery.id}>
                  <td>{formatDateTime(delivery.created_at)}</td>
                  <td>
                    {DELIVERY_TYPE_LABELS[delivery.type]}
                    {delivery.feedback_id && delivery.type !== 'integration.test' && (
                      <>
                        :{' '}
                        <a href={`/projects/${projectId}/feedback/${delivery.feedback_id}`} class="break">
                          {delivery.feedback_title ?? 'the item'}
                        </a>
                      </>
                    )}
                  </td>
                  <td class="break">{target(delivery)}</td>
                  <td>
                    <DeliveryState delivery={delivery} />
                  </td>
                  <td>
                    {delivery.status === 'failed' && (
                      <button type="button" onClick={() => retry(delivery)} disabled={action.busy}>
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {action.failure && (
        <FailureNotice failure={action.failure} planHint="Email deliveries are part of the Team plan; integrations of Pro and Team." />
      )}
    </section>
  );
}

/** A delivery's state in words: delivered when, failed after how many attempts, or when the next try is due. */
function DeliveryState({ delivery }: { delivery: Schemas['Delivery'] }) {
  if (delivery.status === 'delivered') {
    return (
      <>
        Delivered <span class="muted">{formatDateTime(delivery.delivered_at)}</span>
        {delivery.attempts > 1 && <span class="muted"> (after {attempts(delivery.attempts)})</span>}
      </>
    );
  }
  if (delivery.status === 'failed') {
    return (
      <>
        Failed <span class="muted">after {attempts(delivery.attempts)}</span>
        {delivery.last_error && <div class="muted break">{delivery.last_error}</div>}
      </>
    );
  }
  return (
    <>
      Pending{' '}
      <span class="muted">
        {delivery.attempts === 0 ? 'first try' : `next try, after ${attempts(delivery.attempts)},`}{' '}
        {delivery.next_attempt_at ? `due ${formatDateTime(delivery.next_attempt_at)}` : 'soon'}
      </span>
      {delivery.last_error && <div class="muted break">{delivery.last_error}</div>}
    </>
  );
}
