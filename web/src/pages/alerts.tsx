import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { EventNameOptions, useEventNames } from '../components/event-names';
import { FilterBar } from '../components/filter-bar';
import { Page } from '../components/layout';
import { MeasurePicker } from '../components/measure-picker';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading, PlanGate } from '../components/states';
import { type Series, TimeChart } from '../components/time-chart';
import { PLAN_LABELS, useAccount } from '../lib/account';
import type { FilterNode } from '../lib/filters';
import { formatDateTime, isoDay } from '../lib/format';
import { type Integration, integrationName } from '../lib/integrations';
import { formatMeasure, measureLabel } from '../lib/measures';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

type Alert = Schemas['Alert'];
type Condition = Schemas['AlertCondition'];
type Interval = Alert['interval'];

const ALERTS_PLAN = 'Alerts are part of the Pro and Team plans.';
const INTERVAL_LABELS: Record<Interval, string> = { hour: 'Every hour', day: 'Every day', week: 'Every week' };
const INTERVAL_UNITS: Record<Interval, string> = { hour: 'hours', day: 'days', week: 'weeks' };
const STATE_LABELS: Record<Alert['state'], string> = { unknown: 'Not checked yet', ok: 'OK', firing: 'Firing' };
const CONDITION_TYPES = [
  { type: 'above', label: 'is above' },
  { type: 'below', label: 'is below' },
  { type: 'increase', label: 'rises by at least (%)' },
  { type: 'decrease', label: 'falls by at least (%)' },
] as const;
type ConditionType = (typeof CONDITION_TYPES)[number]['type'];

/** The measures an alert offers before active users and property math: the admin surface's counts. */
const ALERT_MEASURES = [
  { measure: 'event_count', label: 'Events' },
  { measure: 'unique_event_users', label: 'Unique users' },
  { measure: 'sessions', label: 'Sessions' },
  { measure: 'bounce_rate', label: 'Bounce rate' },
  { measure: 'feedback_count', label: 'New feedback' },
  { measure: 'vote_count', label: 'Votes' },
  { measure: 'comment_count', label: 'Comments' },
  { measure: 'new_sdk_users', label: 'New SDK users' },
  { measure: 'paying_users', label: 'Paying users' },
  { measure: 'total_mrr', label: 'Total MRR' },
] as const;

/** A condition in words: "is above 100", "falls by at least 50 %". */
export function describeCondition(condition: Condition): string {
  if ('value' in condition) return `${condition.type === 'above' ? 'is above' : 'is below'} ${condition.value}`;
  return `${condition.type === 'increase' ? 'rises' : 'falls'} by at least ${condition.percent} %`;
}

/**
 * The line a chart draws for the condition: the threshold itself, or for a change the value it
 * takes from the point before (before × (1 ± percent)).
 */
function thresholdLine(condition: Condition, values: (number | null)[]): (number | null)[] {
  if ('value' in condition) return values.map(() => condition.value);
  const factor = condition.type === 'increase' ? 1 + condition.percent / 100 : 1 - condition.percent / 100;
  return values.map((_, i) => {
    const before = i > 0 ? values[i - 1] : null;
    return before === null || before === undefined || before === 0 ? null : before * factor;
  });
}

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
  const series: Series[] = [
    { label: measureLabel(alert.measure), values, color: '#2457c5' },
    { label: 'Threshold', values: thresholdLine(alert.condition, values), color: '#b3261e', dash: [6, 4] },
  ];
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

const conditionOf = (type: ConditionType, amount: number): Condition =>
  type === 'above' || type === 'below' ? { type, value: amount } : { type, percent: amount };

function AlertForm({
  projectId,
  alert,
  onSaved,
  onCancel,
}: {
  projectId: string;
  alert: Alert | null;
  onSaved: () => void;
  onCancel: () => void;
}) {
  const from = isoDay(29);
  const to = isoDay(0);
  const [name, setName] = useState(alert?.name ?? '');
  const [measure, setMeasure] = useState<string>(alert?.measure ?? 'event_count');
  const [event, setEvent] = useState(alert?.event ?? '');
  const [filters, setFilters] = useState<FilterNode[]>((alert?.filters as FilterNode[] | undefined) ?? []);
  const [interval, setInterval] = useState<Interval>(alert?.interval ?? 'day');
  const [type, setType] = useState<ConditionType>(alert?.condition.type ?? 'above');
  const [amount, setAmount] = useState(alert ? String('value' in alert.condition ? alert.condition.value : alert.condition.percent) : '');
  const [integrationIds, setIntegrationIds] = useState<string[]>(alert?.channels.integrations ?? []);
  const [email, setEmail] = useState(alert?.channels.email ?? false);
  const [enabled, setEnabled] = useState(alert?.enabled ?? true);
  const [problem, setProblem] = useState<string | null>(null);
  const names = useEventNames(projectId, from, to);
  const integrations = useResource(
    () => unwrap(api.GET('/projects/{id}/integrations', { params: { path: { id: projectId } } })).catch(() => [] as Integration[]),
    [projectId],
  );
  const save = useAction();
  const previewAction = useAction();
  const [preview, setPreview] = useState<Schemas['AlertPreview'] | null>(null);

  const question = () => {
    const number = Number(amount);
    if (amount.trim() === '' || !Number.isFinite(number)) {
      setProblem(type === 'above' || type === 'below' ? 'Write the threshold, a number.' : 'Write the percentage, a number above 0.');
      return null;
    }
    setProblem(null);
    return { measure, event: event.trim() || null, filters, interval, condition: conditionOf(type, number) };
  };
  const runPreview = () =>
    previewAction.run(async () => {
      const q = question();
      if (!q) return;
      setPreview(await unwrap(api.POST('/projects/{id}/alerts/preview', { params: { path: { id: projectId } }, body: q as never })));
    });
  const submit = () =>
    save.run(async () => {
      const q = question();
      if (!q) return;
      if (name.trim() === '') return setProblem('Name the alert.');
      const body = { ...q, name, channels: { integrations: integrationIds, email }, enabled };
      if (alert) {
        await unwrap(
          api.PATCH('/projects/{id}/alerts/{alertId}', { params: { path: { id: projectId, alertId: alert.id } }, body: body as never }),
        );
      } else {
        await unwrap(api.POST('/projects/{id}/alerts', { params: { path: { id: projectId } }, body: body as never }));
      }
      onSaved();
    });

  return (
    <>
      <section class="card" aria-labelledby="alert-form-heading">
        <h2 id="alert-form-heading">{alert ? `Edit “${alert.name}”` : 'New alert'}</h2>
        <p class="muted">Ask the question as on the metrics page: a measure, one event or all, and filters.</p>
        <div class="filters">
          <div class="field">
            <label for="alert-event">Event</label>
            <input
              id="alert-event"
              list="alert-event-names"
              value={event}
              placeholder="All events"
              maxLength={100}
              autoComplete="off"
              onInput={(e) => setEvent(e.currentTarget.value)}
            />
            <EventNameOptions id="alert-event-names" names={names.data?.event_names} />
          </div>
        </div>
      </section>
      <MeasurePicker
        projectId={projectId}
        from={from}
        to={to}
        event={event.trim() || undefined}
        measure={measure}
        baseMeasures={ALERT_MEASURES}
        onMeasure={(chosen) => setMeasure(chosen ?? 'event_count')}
        submitLabel="Use this measure"
        idPrefix="alert-measure"
      />
      <FilterBar
        projectId={projectId}
        from={from}
        to={to}
        event={event.trim() || undefined}
        filters={filters}
        onChange={setFilters}
        idPrefix="alert-filter"
      />
      <form
        class="card alert-form"
        aria-label="The alert’s condition and channels"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <p data-testid="alert-question">
          <strong>{measureLabel(measure)}</strong>
          {event.trim() ? ` of ${event.trim()}` : ', all events'}
          {filters.length > 0 ? `, ${filters.length} ${filters.length === 1 ? 'filter' : 'filters'}` : ''}
        </p>
        <div class="filters">
          <div class="field">
            <label for="alert-name">Name</label>
            <input id="alert-name" value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="alert-interval">Checked</label>
            <select id="alert-interval" value={interval} onChange={(e) => setInterval(e.currentTarget.value as Interval)}>
              {(Object.keys(INTERVAL_LABELS) as Interval[]).map((value) => (
                <option key={value} value={value}>
                  {INTERVAL_LABELS[value]}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="alert-condition">It fires when the value</label>
            <select id="alert-condition" value={type} onChange={(e) => setType(e.currentTarget.value as ConditionType)}>
              {CONDITION_TYPES.map((c) => (
                <option key={c.type} value={c.type}>
                  {c.label}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="alert-amount">{type === 'above' || type === 'below' ? 'Threshold' : 'Percent'}</label>
            <input
              id="alert-amount"
              value={amount}
              inputMode="decimal"
              autoComplete="off"
              onInput={(e) => setAmount(e.currentTarget.value)}
            />
          </div>
        </div>
        <p class="muted field-note">
          Equal to the threshold is neither above nor below. A rise or fall of exactly the percentage fires. After an interval of 0 there is
          no percentage: any value above 0 counts as a rise, and nothing falls.
        </p>
        <fieldset>
          <legend>Tell</legend>
          <div class="field field-check">
            <input id="alert-email" type="checkbox" checked={email} onChange={(e) => setEmail(e.currentTarget.checked)} />
            <label for="alert-email">By email (the owner, and the members on Team)</label>
          </div>
          {(integrations.data ?? []).map((integration) => (
            <div class="field field-check" key={integration.id}>
              <input
                id={`alert-integration-${integration.id}`}
                type="checkbox"
                checked={integrationIds.includes(integration.id)}
                onChange={(e) =>
                  setIntegrationIds(
                    e.currentTarget.checked ? [...integrationIds, integration.id] : integrationIds.filter((id) => id !== integration.id),
                  )
                }
              />
              <label for={`alert-integration-${integration.id}`}>{integrationName(integration)}</label>
            </div>
          ))}
          <div class="field field-check">
            <input id="alert-enabled" type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} />
            <label for="alert-enabled">Checked (uncheck to pause it)</label>
          </div>
        </fieldset>
        {problem && (
          <p class="field-error" role="alert">
            {problem}
          </p>
        )}
        <div class="form-actions">
          <button type="button" onClick={() => void runPreview()} disabled={previewAction.busy}>
            Would it have fired?
          </button>
          <button type="submit" class="primary" disabled={save.busy}>
            {alert ? 'Save the alert' : 'Create the alert'}
          </button>
          {alert && (
            <button type="button" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
        {save.failure && <FailureNotice failure={save.failure} planHint={ALERTS_PLAN} />}
        {previewAction.failure && <FailureNotice failure={previewAction.failure} />}
      </form>
      {preview && <Preview preview={preview} measure={measure} interval={interval} condition={conditionOf(type, Number(amount))} />}
    </>
  );
}

/** The "would have fired" preview: the last 30 intervals' values and the threshold, and when it would have fired. */
function Preview({
  preview,
  measure,
  interval,
  condition,
}: {
  preview: Schemas['AlertPreview'];
  measure: string;
  interval: Interval;
  condition: Condition;
}) {
  const values = preview.intervals.map((i) => i.value);
  const series: Series[] = [
    { label: measureLabel(measure), values, color: '#2457c5' },
    { label: 'Threshold', values: thresholdLine(condition, values), color: '#b3261e', dash: [6, 4] },
  ];
  const uncovered = preview.intervals.filter((i) => !i.covered).length;
  const changes = preview.intervals.filter((i) => i.notified !== null);
  const summary = `Over the last ${preview.intervals.length} ${INTERVAL_UNITS[interval]} it would have fired ${preview.fired} ${preview.fired === 1 ? 'time' : 'times'}.`;
  return (
    <section class="card" aria-labelledby="preview-heading">
      <h2 id="preview-heading">Would it have fired?</h2>
      <p data-testid="alert-preview-summary">{summary}</p>
      {uncovered > 0 && (
        <p class="muted">
          The first {uncovered} {INTERVAL_UNITS[interval]} lie before the {preview.retention_window_days} days your plan keeps: they have no
          value.
        </p>
      )}
      <TimeChart
        times={preview.intervals.map((i) => Date.parse(i.interval_start) / 1000)}
        series={series}
        interval={interval}
        partialIndex={null}
        secondary
        label="Would-have-fired chart"
        summary={`${summary} Threshold: ${describeCondition(condition)}.`}
      />
      {changes.length > 0 && (
        <ul data-testid="alert-preview-changes">
          {changes.map((i) => (
            <li key={i.interval_start}>
              {formatDateTime(i.interval_start)}: {i.notified === 'firing' ? 'would have started firing' : 'would have resolved'} at{' '}
              {formatMeasure(measure, i.value)}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
