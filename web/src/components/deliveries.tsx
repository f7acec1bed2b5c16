import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { formatDateTime } from '../lib/format';
import { attempts, type Integration, integrationName, KIND_LABELS } from '../lib/integrations';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { ScrollRegion } from './scroll-region';
import { Empty, FailureNotice, Loading } from './states';

const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
const DELIVERY_TYPE_LABELS: Record<Schemas['Delivery']['type'], string> = {
  'feedback.created': 'New feedback',
  'feedback.status_changed': 'Status change',
  'integration.test': 'Test message',
};

/** The notifications sent to the project's integrations, filtered by status; a failed one can be retried. */
export function Deliveries({ projectId }: { projectId: string }) {
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
