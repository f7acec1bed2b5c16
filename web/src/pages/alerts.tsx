import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { AlertForm } from '../components/alert-form';
import { Page } from '../components/layout';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading, PlanGate } from '../components/states';
import { TimeChart } from '../components/time-chart';
import { PLAN_LABELS, useAccount } from '../lib/account';
import { ALERTS_PLAN, type Alert, alertSeries, describeCondition, INTERVAL_LABELS, INTERVAL_UNITS } from '../lib/alerts';
import { formatDateTime } from '../lib/format';
import { formatMeasure, measureLabel } from '../lib/measures';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

const STATE_LABELS: Record<Alert['state'], string> = { unknown: 'Not checked yet', ok: 'OK', firing: 'Firing' };

/**
 * The Alerts page (docs/dashboard.md, docs/notifications.md "Alerts"): the project's alerts with
 * their state and last value, a form that asks the question with the metrics page's filter bar and
 * measure picker and shows what it would have done over the last 30 intervals, and each alert's
 * check history drawn with its threshold.
 */
export function AlertsPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const account = useAccount();
  const alerts = useResource(() => unwrap(api.GET('/projects/{id}/alerts', { params: { path: { id: projectId } } })), [projectId]);
  const [editing, setEditing] = useState<Alert | null>(null);
  const [history, setHistory] = useState<Alert | null>(null);
  const gated = account?.limits.max_alerts_per_project === 0;
  return (
    <Page title="Alerts" projectId={projectId}>
      {gated && account && (
        <section class="card" aria-labelledby="alerts-plan-heading">
          <h2 id="alerts-plan-heading">Alerts on metrics</h2>
          <PlanGate reason={`${ALERTS_PLAN.replace(/\.$/, '')}; this account is on the ${PLAN_LABELS[account.plan]} plan`} />
        </section>
      )}
      <AlertList
        projectId={projectId}
        alerts={alerts}
        onEdit={(alert) => setEditing(alert)}
        onHistory={(alert) => setHistory(alert)}
        limit={account?.limits.max_alerts_per_project}
      />
      {history && <CheckHistory key={history.id} projectId={projectId} alert={history} onClose={() => setHistory(null)} />}
      {!gated && (
        <AlertForm
          key={editing?.id ?? 'new'}
          projectId={projectId}
          alert={editing}
          onSaved={() => {
            setEditing(null);
            alerts.reload();
          }}
          onCancel={() => setEditing(null)}
        />
      )}
    </Page>
  );
}

function AlertList({
  projectId,
  alerts,
  onEdit,
  onHistory,
  limit,
}: {
  projectId: string;
  alerts: ReturnType<typeof useResource<Alert[]>>;
  onEdit: (alert: Alert) => void;
  onHistory: (alert: Alert) => void;
  limit: number | undefined;
}) {
  const action = useAction();
  const [tested, setTested] = useState<{ id: string; text: string } | null>(null);
  const remove = (alert: Alert) =>
    action.run(async () => {
      if (!window.confirm(`Delete the alert “${alert.name}” and its checks?`)) return;
      await unwrap(api.DELETE('/projects/{id}/alerts/{alertId}', { params: { path: { id: projectId, alertId: alert.id } } }));
      alerts.reload();
    });
  const test = (alert: Alert) =>
    action.run(async () => {
      const result = await unwrap(
        api.POST('/projects/{id}/alerts/{alertId}/test', { params: { path: { id: projectId, alertId: alert.id } } }),
      );
      const sent = result.deliveries.length;
      setTested({
        id: alert.id,
        text: `So far this ${alert.interval}: ${formatMeasure(alert.measure, result.value)} (the one before: ${formatMeasure(alert.measure, result.previous_value)}); the condition ${result.condition_met ? 'holds' : 'does not hold'}. ${sent === 0 ? 'No channel to send a test to.' : `Test message sent to ${sent} ${sent === 1 ? 'channel' : 'channels'}.`}`,
      });
    });
  return (
    <section class="card" aria-labelledby="alerts-heading">
      <h2 id="alerts-heading">Alerts</h2>
      {limit !== undefined && limit > 0 && (
        <p class="muted">
          Checked after each interval ends (UTC); the channels hear when an alert starts firing and when it resolves. Your plan allows{' '}
          {limit} per project.
        </p>
      )}
      {alerts.state === 'failed' && <FailureNotice failure={alerts.failure} onRetry={alerts.reload} planHint={ALERTS_PLAN} />}
      {alerts.state === 'loading' && !alerts.data && <Loading what="alerts" />}
      {alerts.data?.length === 0 && <Empty>No alert yet.</Empty>}
      {alerts.data && alerts.data.length > 0 && (
        <ScrollRegion label="Alerts">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">When</th>
                <th scope="col">State</th>
                <th scope="col">Last value</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {alerts.data.map((alert) => (
                <tr key={alert.id} data-testid="alert-row">
                  <td class="break">
                    <strong>{alert.name}</strong>
                    {!alert.enabled && <span class="badge badge-muted">Off</span>}
                  </td>
                  <td class="break">
                    {measureLabel(alert.measure)}
                    {alert.event ? ` of ${alert.event}` : ''} {describeCondition(alert.condition)},{' '}
                    {INTERVAL_LABELS[alert.interval].toLowerCase()}
                    {alert.filters.length > 0 && ` (${alert.filters.length} ${alert.filters.length === 1 ? 'filter' : 'filters'})`}
                  </td>
                  <td>
                    <span class={`badge ${alert.state === 'firing' ? 'badge-danger' : 'badge-muted'}`} data-testid="alert-state">
                      {STATE_LABELS[alert.state]}
                    </span>
                  </td>
                  <td>
                    {formatMeasure(alert.measure, alert.last_value)}
                    {alert.last_checked_at && <div class="muted">{formatDateTime(alert.last_checked_at)}</div>}
                  </td>
                  <td class="row-actions">
                    <button type="button" onClick={() => onHistory(alert)} aria-label={`Check history of ${alert.name}`}>
                      History
                    </button>
                    <button type="button" onClick={() => onEdit(alert)} aria-label={`Edit ${alert.name}`}>
                      Edit
                    </button>
                    <button type="button" onClick={() => test(alert)} disabled={action.busy} aria-label={`Send test of ${alert.name}`}>
                      Send test
                    </button>
                    <button type="button" onClick={() => remove(alert)} disabled={action.busy} aria-label={`Delete ${alert.name}`}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {tested && (
        <p role="status" data-testid="alert-test-result">
          {tested.text}
        </p>
      )}
      {action.failure && <FailureNotice failure={action.failure} planHint={ALERTS_PLAN} />}
    </section>
  );
}

/** An alert's last checks as a small chart, its threshold drawn beside the values. */
function CheckHistory({ projectId, alert, onClose }: { projectId: string; alert: Alert; onClose: () => void }) {
  const checks = useResource(
    () => unwrap(api.GET('/projects/{id}/alerts/{alertId}/checks', { params: { path: { id: projectId, alertId: alert.id } } })),
    [projectId, alert.id],
  );
  const list = [...(checks.data ?? [])].reverse();
  const values = list.map((check) => check.value);
  const series = alertSeries(alert.measure, alert.condition, values);
  const fired = list.filter((check) => check.notified === 'firing').length;
  return (
    <section class="card" aria-labelledby="history-heading">
      <h2 id="history-heading">Checks of “{alert.name}”</h2>
      {checks.state === 'failed' && <FailureNotice failure={checks.failure} onRetry={checks.reload} />}
      {checks.state === 'loading' && !checks.data && <Loading what="checks" />}
      {checks.data?.length === 0 && <Empty>Not checked yet: the first check comes after the current {alert.interval} ends.</Empty>}
      {list.length > 0 && (
        <>
          <TimeChart
            times={list.map((check) => Date.parse(check.interval_start) / 1000)}
            series={series}
            interval={alert.interval}
            partialIndex={null}
            secondary
            label="Check history chart"
            summary={`${list.length} checks of ${measureLabel(alert.measure)}, threshold ${describeCondition(alert.condition)}; it started firing ${fired} ${fired === 1 ? 'time' : 'times'}.`}
          />
          <ul class="muted" data-testid="check-changes">
            {list
              .filter((check) => check.notified !== null || check.skipped > 0)
              .map((check) => (
                <li key={check.interval_start}>
                  {formatDateTime(check.interval_start)}:{' '}
                  {check.notified === 'firing' ? 'started firing' : check.notified === 'resolved' ? 'resolved' : 'checked'} at{' '}
                  {formatMeasure(alert.measure, check.value)}
                  {check.skipped > 0 && ` (${check.skipped} ${INTERVAL_UNITS[alert.interval]} before it not checked)`}
                </li>
              ))}
          </ul>
        </>
      )}
      <button type="button" onClick={onClose}>
        Close the history
      </button>
    </section>
  );
}
