import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { EventNameOptions, useEventNames } from '../components/event-names';
import { FilterBar } from '../components/filter-bar';
import { FunnelAnswer } from '../components/funnel-answer';
import { InsightResult } from '../components/insight-result';
import { Page } from '../components/layout';
import { readFilters, withFilters } from '../lib/filters';
import { isoDay } from '../lib/format';
import { dayParam, textParam, toParams, useQueryState, useUrlDraft } from '../lib/url-state';
import { useResource } from '../lib/use-resource';

type FunnelRequest = Schemas['FunnelRequest'];
type ValueType = 'string' | 'number' | 'boolean';
type Condition = { key: string; type: ValueType; value: string };
type StepDraft = { eventName: string; where: Condition[] };

const MIN_STEPS = 2;
const MAX_STEPS = 10;
const UNITS = { minutes: 60, hours: 3600, days: 86_400 } as const;
type Unit = keyof typeof UNITS;
const PRO_CUSTOM =
  'Funnels over custom events are part of the Pro and Team plans; below Pro a step can name feedback_list, feedback_detail or submit_feedback.';

type FunnelDraft = { steps: StepDraft[]; from: string; to: string; windowValue: string; unit: Unit; breakdown: string };

const WINDOW_UNIT_LETTERS = { m: 'minutes', h: 'hours', d: 'days' } as const;

/**
 * The inputs live in the query string, so a funnel can be shared and reloaded:
 * `?step=signed_up&step=purchased&where=2:["plan","pro"]&window=7d&from=&to=&breakdown=`. `step`
 * repeats in order; `where` is a step's number and a JSON [property, value] pair (the value keeps
 * its JSON type); `window` is a number and m, h or d. Fewer than two steps is the empty form.
 */
function readQuery(params: URLSearchParams): { draft: FunnelDraft; request: FunnelRequest | null } {
  const names = params.getAll('step').slice(0, MAX_STEPS);
  const steps: StepDraft[] = names.map((eventName) => ({ eventName, where: [] }));
  for (const entry of params.getAll('where')) {
    const parsed = parseWhere(entry);
    if (parsed) steps[parsed.step - 1]?.where.push(parsed.condition);
  }
  while (steps.length < MIN_STEPS) steps.push({ eventName: '', where: [] });
  const window = /^(\d+(?:\.\d+)?)([mhd])$/.exec(params.get('window') ?? '');
  const draft: FunnelDraft = {
    steps,
    from: dayParam(params, 'from', isoDay(29)),
    to: dayParam(params, 'to', isoDay(0)),
    windowValue: window?.[1] ?? '7',
    unit: window ? WINDOW_UNIT_LETTERS[window[2] as keyof typeof WINDOW_UNIT_LETTERS] : 'days',
    breakdown: textParam(params, 'breakdown') ?? '',
  };
  return { draft, request: names.length >= MIN_STEPS ? toRequest(draft) : null };
}

function parseWhere(entry: string): { step: number; condition: Condition } | null {
  const colon = entry.indexOf(':');
  const step = Number(entry.slice(0, colon));
  try {
    const pair: unknown = JSON.parse(entry.slice(colon + 1));
    if (!Number.isInteger(step) || !Array.isArray(pair) || typeof pair[0] !== 'string') return null;
    const value: unknown = pair[1];
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return null;
    return { step, condition: { key: pair[0], type: typeof value as ValueType, value: String(value) } };
  } catch {
    return null;
  }
}

function toRequest(draft: FunnelDraft): FunnelRequest {
  return {
    steps: draft.steps.map((step) => ({
      eventName: step.eventName.trim(),
      ...(step.where.length > 0 ? { where: Object.fromEntries(step.where.map((c) => [c.key.trim(), typed(c)])) } : {}),
    })),
    dateFrom: draft.from,
    dateTo: draft.to,
    conversionWindowSeconds: Math.round(Number(draft.windowValue) * UNITS[draft.unit]),
    ...(draft.breakdown.trim() ? { breakdown: draft.breakdown.trim() } : {}),
  };
}

function toQuery(draft: FunnelDraft): URLSearchParams {
  return toParams({
    step: draft.steps.map((step) => step.eventName.trim()),
    where: draft.steps.flatMap((step, i) => step.where.map((c) => `${i + 1}:${JSON.stringify([c.key.trim(), typed(c)])}`)),
    window: `${Number(draft.windowValue)}${draft.unit.charAt(0)}`,
    from: draft.from,
    to: draft.to,
    breakdown: draft.breakdown.trim(),
  });
}

/** Users who did the steps in order within the conversion window (POST /insights/funnel, docs/insights.md). */
export function FunnelsPage() {
  const { params: routeParams } = useRoute();
  const projectId = routeParams.id ?? '';
  const { params, search, setParams } = useQueryState();
  const { draft, request: form } = readQuery(params);
  // The filter bar's list narrows every step (docs/insights.md); it is the URL's `filters`.
  const filters = readFilters(params.get('filters'));
  // With `compare`, the API adds the earlier period's steps (docs/insights.md).
  const compare = params.get('compare') === 'previous_period' ? 'previous_period' : undefined;
  const request =
    form && (filters.length > 0 || compare)
      ? ({ ...form, ...(filters.length > 0 ? { filters } : {}), ...(compare ? { compare } : {}) } as FunnelRequest)
      : form;
  const result = useResource(
    () =>
      request === null
        ? Promise.resolve(null)
        : unwrap(api.POST('/projects/{id}/insights/funnel', { params: { path: { id: projectId } }, body: request })),
    [projectId, JSON.stringify(request)],
  );
  return (
    <Page title="Funnels" projectId={projectId}>
      <FunnelForm
        projectId={projectId}
        initial={draft}
        search={search}
        busy={result.state === 'loading' && request !== null}
        onSubmit={(next) => {
          const query = withFilters(toQuery(next), filters);
          if (compare) query.set('compare', compare);
          setParams(query);
        }}
      />
      <FilterBar
        projectId={projectId}
        from={draft.from}
        to={draft.to}
        filters={filters}
        onChange={(next) => setParams(withFilters(params, next))}
      />
      <div class="card field-check">
        <input
          id="funnel-compare"
          type="checkbox"
          checked={compare !== undefined}
          onChange={(e) => {
            const next = new URLSearchParams(params);
            if (e.currentTarget.checked) next.set('compare', 'previous_period');
            else next.delete('compare');
            setParams(next);
          }}
        />
        <label for="funnel-compare">Compare with the previous period</label>
      </div>
      <InsightResult
        id="funnel-result"
        heading="Conversion"
        result={result}
        asked={request !== null}
        emptyHint="Choose two to ten steps and compute the funnel."
        loadingWhat="the funnel"
        planHint={PRO_CUSTOM}
      >
        {(answer) => <FunnelAnswer answer={answer} />}
      </InsightResult>
    </Page>
  );
}

function FunnelForm({
  projectId,
  initial,
  search,
  busy,
  onSubmit,
}: {
  projectId: string;
  initial: FunnelDraft;
  search: string;
  busy: boolean;
  onSubmit: (draft: FunnelDraft) => void;
}) {
  // Back, forward or a pasted link change the query: the fields follow it.
  const [draft, set] = useUrlDraft(initial, search);
  const { steps, from, to, windowValue, unit, breakdown } = draft;
  const setSteps = (next: StepDraft[]) => set({ steps: next });
  const names = useEventNames(projectId);

  const change = (index: number, next: StepDraft) => setSteps(steps.map((step, i) => (i === index ? next : step)));
  const submit = (event: Event) => {
    event.preventDefault();
    onSubmit(draft);
  };

  return (
    <form class="card funnel-form" aria-labelledby="funnel-form-heading" onSubmit={submit}>
      <h2 id="funnel-form-heading">Steps</h2>
      <EventNameOptions id="funnel-event-names" names={names.data?.event_names} />
      <ol class="funnel-steps">
        {steps.map((step, index) => (
          <StepFields
            key={index}
            index={index}
            step={step}
            canRemove={steps.length > MIN_STEPS}
            onChange={(next) => change(index, next)}
            onRemove={() => setSteps(steps.filter((_, i) => i !== index))}
          />
        ))}
      </ol>
      <div class="button-row">
        <button type="button" disabled={steps.length >= MAX_STEPS} onClick={() => setSteps([...steps, { eventName: '', where: [] }])}>
          Add a step
        </button>
        <span class="muted">
          {steps.length} of at most {MAX_STEPS} steps
        </span>
      </div>
      <div class="filters funnel-options">
        <div class="field">
          <label for="funnel-from">From</label>
          <DateInput id="funnel-from" required value={from} onChange={(value) => set({ from: value })} />
        </div>
        <div class="field">
          <label for="funnel-to">To</label>
          <DateInput id="funnel-to" required value={to} onChange={(value) => set({ to: value })} />
        </div>
        <div class="field">
          <label for="funnel-window">Conversion window</label>
          <span class="field-row">
            <input
              id="funnel-window"
              type="number"
              min="1"
              step="any"
              required
              class="input-short"
              value={windowValue}
              onInput={(e) => set({ windowValue: e.currentTarget.value })}
            />
            <select aria-label="Conversion window unit" value={unit} onChange={(e) => set({ unit: e.currentTarget.value as Unit })}>
              <option value="minutes">minutes</option>
              <option value="hours">hours</option>
              <option value="days">days</option>
            </select>
          </span>
        </div>
        <div class="field">
          <label for="funnel-breakdown">Break down by property (optional)</label>
          <input
            id="funnel-breakdown"
            value={breakdown}
            maxLength={100}
            placeholder="plan"
            onInput={(e) => set({ breakdown: e.currentTarget.value })}
          />
        </div>
        <button type="submit" class="primary" disabled={busy}>
          Compute funnel
        </button>
      </div>
      <p class="muted field-note">
        A user counts at a step when they did every step before it in order, all within the conversion window from their first step.
      </p>
    </form>
  );
}

function StepFields({
  index,
  step,
  canRemove,
  onChange,
  onRemove,
}: {
  index: number;
  step: StepDraft;
  canRemove: boolean;
  onChange: (step: StepDraft) => void;
  onRemove: () => void;
}) {
  const n = index + 1;
  const setCondition = (i: number, next: Condition) => onChange({ ...step, where: step.where.map((c, j) => (j === i ? next : c)) });
  return (
    <li class="funnel-step">
      <div class="field-row">
        <label for={`step-${n}`} class="step-label">
          Step {n} event
        </label>
        <input
          id={`step-${n}`}
          list="funnel-event-names"
          required
          maxLength={100}
          autoComplete="off"
          value={step.eventName}
          onInput={(e) => onChange({ ...step, eventName: e.currentTarget.value })}
        />
        <button type="button" onClick={() => onChange({ ...step, where: [...step.where, { key: '', type: 'string', value: '' }] })}>
          Add a condition
        </button>
        {canRemove && (
          <button type="button" class="link-button" onClick={onRemove} aria-label={`Remove step ${n}`}>
            Remove
          </button>
        )}
      </div>
      {step.where.length > 0 && (
        <ul class="conditions" aria-label={`Conditions of step ${n}`}>
          {step.where.map((condition, i) => (
            <li key={i} class="field-row">
              <span class="muted">where</span>
              <input
                aria-label={`Step ${n} condition ${i + 1} property`}
                required
                maxLength={100}
                placeholder="property"
                value={condition.key}
                onInput={(e) => setCondition(i, { ...condition, key: e.currentTarget.value })}
              />
              <span class="muted">=</span>
              <select
                aria-label={`Step ${n} condition ${i + 1} type`}
                value={condition.type}
                onChange={(e) => setCondition(i, { ...condition, type: e.currentTarget.value as ValueType, value: '' })}
              >
                <option value="string">text</option>
                <option value="number">number</option>
                <option value="boolean">true / false</option>
              </select>
              {condition.type === 'boolean' ? (
                <select
                  aria-label={`Step ${n} condition ${i + 1} value`}
                  value={condition.value || 'true'}
                  onChange={(e) => setCondition(i, { ...condition, value: e.currentTarget.value })}
                >
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : (
                <input
                  aria-label={`Step ${n} condition ${i + 1} value`}
                  type={condition.type === 'number' ? 'number' : 'text'}
                  step="any"
                  required
                  value={condition.value}
                  onInput={(e) => setCondition(i, { ...condition, value: e.currentTarget.value })}
                />
              )}
              <button
                type="button"
                class="link-button"
                aria-label={`Remove condition ${i + 1} of step ${n}`}
                onClick={() => onChange({ ...step, where: step.where.filter((_, j) => j !== i) })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** A condition's value in its JSON type: the API compares it with the property's, type included. */
function typed(condition: Condition): string | number | boolean {
  if (condition.type === 'number') return Number(condition.value);
  if (condition.type === 'boolean') return condition.value !== 'false';
  return condition.value;
}
