import { useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import {
  ALERTS_PLAN,
  type Alert,
  alertSeries,
  type Condition,
  describeCondition,
  INTERVAL_LABELS,
  INTERVAL_UNITS,
  type Interval,
} from '../lib/alerts';
import type { FilterNode } from '../lib/filters';
import { formatDateTime, isoDay } from '../lib/format';
import { type Integration, integrationName } from '../lib/integrations';
import { formatMeasure, measureLabel } from '../lib/measures';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { EventNameOptions, useEventNames } from './event-names';
import { FilterBar } from './filter-bar';
import { MeasurePicker } from './measure-picker';
import { FailureNotice } from './states';
import { TimeChart } from './time-chart';

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

const conditionOf = (type: ConditionType, amount: number): Condition =>
  type === 'above' || type === 'below' ? { type, value: amount } : { type, percent: amount };

/** The form that creates or changes an alert, with its would-have-fired preview. */
export function AlertForm({
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
  const series = alertSeries(measure, condition, values);
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
