import { useMemo, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { formatDateTime } from '../lib/format';
import { type AnyIntegration, attempts, integrationName, KIND_LABELS, TRACKER_LABELS } from '../lib/integrations';
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
  'changelog.published': 'Changelog entry',
  'alert.firing': 'Alert firing',
  'alert.resolved': 'Alert resolved',
  'alert.test': 'Alert test',
  'digest.weekly': 'Weekly digest',
  'feedback.votes_changed': 'Votes (to the issue)',
};

/** Deliveries per page: one request asks one more, to know whether a next page exists. */
const PAGE = 25;

/**
 * The notifications sent to the project's integrations and by email, filtered by status, a page at
 * a time (newest first); a failed one can be retried.
 */
export function Deliveries({ projectId }: { projectId: string }) {
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [page, setPage] = useState(0);
  const fetched = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/deliveries', {
          params: { path: { id: projectId }, query: { limit: PAGE + 1, offset: page * PAGE, ...(status ? { status } : {}) } },
        }),
      ),
    [projectId, status, page],
  );
  const hasNext = (fetched.data?.length ?? 0) > PAGE;
  // The page's rows (the one more asked only says whether an older page exists); made once per answer.
  const rows = useMemo(() => fetched.data?.slice(0, PAGE), [fetched.data]);
  const list = { ...fetched, data: rows };
  // Integrations name the deliveries' targets; on a plan without them the list stays empty.
  const integrations = useResource(
    () => unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } })).catch(() => [] as AnyIntegration[]),
    // Read again with each list: a delivery may be to an integration added since.
    [projectId, fetched.data],
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
    // A tracker's delivery is to one linked issue of the item.
    if (integration)
      return `${integrationName(integration)}${delivery.channel === 'github' || delivery.channel === 'linear' ? ' (linked issue)' : ''}`;
    const label =
      delivery.channel === 'github' || delivery.channel === 'linear' ? TRACKER_LABELS[delivery.channel] : KIND_LABELS[delivery.channel];
    return `${label} (integration removed)`;
  };

  return (
    <section class="card" aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Notification deliveries</h2>
      <div class="filters">
        <div class="field">
          <label for="delivery-status">Show</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as DeliveryStatus | '');
              setPage(0);
            }}
          >
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
      {list.data && list.data.length === 0 && (
        <Empty>
          No delivery{status ? ` with status ${status}` : ''}
          {page > 0 ? ' on this page' : ''}.
        </Empty>
      )}
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
                    {delivery.type.startsWith('alert.') && (
                      <>
                        : <a href={`/projects/${projectId}/alerts`}>the alerts</a>
                      </>
                    )}
                    {delivery.changelog_entry_id && (
                      <>
                        :{' '}
                        <a href={`/projects/${projectId}/changelog`} class="break">
                          {delivery.changelog_entry_title ?? 'the entry'}
                        </a>
                      </>
                    )}
                  </td>
                  <td class="recipient">{target(delivery)}</td>
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
      {(page > 0 || hasNext) && (
        <nav class="pager" aria-label="Delivery pages">
          <button type="button" onClick={() => setPage(page - 1)} disabled={page === 0}>
            Newer
          </button>
          <span data-testid="delivery-page">Page {page + 1}</span>
          <button type="button" onClick={() => setPage(page + 1)} disabled={!hasNext}>
            Older
          </button>
        </nav>
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
