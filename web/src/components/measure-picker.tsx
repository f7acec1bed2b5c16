import { useState } from 'preact/hooks';
import { eventProperties } from '../lib/contract-api';
import { kindOf } from '../lib/filters';
import { ACTIVE_MEASURES, PROPERTY_MATH, type PropertyMath, splitMath } from '../lib/measures';
import { useResource } from '../lib/use-resource';

/**
 * What the metrics chart measures: events and unique users (the default), active users (DAU, WAU,
 * MAU), events per user, or a property's math (sum, average, minimum, maximum, median, p90, p95,
 * p99), the property picked from the numeric ones seen in the range. Beside it, the comparison
 * with the previous period. Both are the page's URL (`measure`, `compare`).
 */
export function MeasurePicker({
  projectId,
  from,
  to,
  event,
  measure,
  compare,
  onMeasure,
  onCompare,
  baseMeasures,
  submitLabel = 'Chart this measure',
  idPrefix = 'measure',
}: {
  projectId: string;
  from: string;
  to: string;
  event: string | undefined;
  measure: string | undefined;
  compare?: boolean;
  onMeasure: (measure: string | undefined) => void;
  /** Without it (the alerts' form), no comparison is offered. */
  onCompare?: (on: boolean) => void;
  /** Named measures offered instead of the chart's default (events and unique users): the alerts' form asks for one measure. */
  baseMeasures?: readonly { measure: string; label: string }[];
  submitLabel?: string;
  idPrefix?: string;
}) {
  const math = measure ? splitMath(measure) : null;
  const [kind, setKind] = useState<string>(math ? math.math : (measure ?? baseMeasures?.[0]?.measure ?? 'default'));
  const [property, setProperty] = useState(math ? math.property.slice('properties.'.length) : '');
  const [problem, setProblem] = useState<string | null>(null);
  const isMath = PROPERTY_MATH.some((m) => m.math === kind);
  const properties = useResource(
    () => (isMath ? eventProperties(projectId, { from, to, event }) : Promise.resolve(null)),
    [projectId, from, to, event, isMath],
  );
  const numeric = (properties.data?.properties ?? []).filter((p) => kindOf(p.types) === 'number');

  const apply = () => {
    if (kind === 'default') return onMeasure(undefined);
    if (!isMath) return onMeasure(kind);
    const key = property.trim().replace(/^properties\./, '');
    if (!/^[^.\s]+(\.[^.\s]+)*$/.test(key)) return setProblem('Name the property whose values are measured, such as duration_ms.');
    setProblem(null);
    onMeasure(`${kind as PropertyMath}:properties.${key}`);
  };

  return (
    <form
      class="card filters"
      aria-label={onCompare ? 'What the chart measures' : 'What is measured'}
      onSubmit={(e) => {
        e.preventDefault();
        apply();
      }}
    >
      <div class="field">
        <label for={`${idPrefix}-kind`}>Measure</label>
        <select id={`${idPrefix}-kind`} value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          {baseMeasures ? (
            baseMeasures.map((m) => (
              <option key={m.measure} value={m.measure}>
                {m.label}
              </option>
            ))
          ) : (
            <option value="default">Events and unique users</option>
          )}
          <optgroup label="Active users">
            {ACTIVE_MEASURES.map((m) => (
              <option key={m.measure} value={m.measure}>
                {m.label}
              </option>
            ))}
          </optgroup>
          <optgroup label="A property's values">
            {PROPERTY_MATH.map((m) => (
              <option key={m.math} value={m.math}>
                {m.label} of a property
              </option>
            ))}
          </optgroup>
        </select>
      </div>
      {isMath && (
        <div class="field">
          <label for={`${idPrefix}-property`}>Of the property</label>
          <input
            id={`${idPrefix}-property`}
            list={`${idPrefix}-properties`}
            value={property}
            autoComplete="off"
            maxLength={200}
            placeholder="duration_ms"
            onInput={(e) => setProperty(e.currentTarget.value)}
          />
          <datalist id={`${idPrefix}-properties`}>
            {numeric.map((p) => (
              <option key={p.property} value={p.property.slice('properties.'.length)} />
            ))}
          </datalist>
        </div>
      )}
      <button type="submit">{submitLabel}</button>
      {onCompare && (
        <div class="field field-check">
          <input id="compare" type="checkbox" checked={compare ?? false} onChange={(e) => onCompare(e.currentTarget.checked)} />
          <label for="compare">Compare with the previous period</label>
        </div>
      )}
      <p class="muted field-note">
        Active users count the distinct users with an event in the trailing 1, 7 or 30 days of each point. A property's math reads its
        numeric values only; a point with none is a gap.
        {onCompare && ' The comparison draws the same number of days just before the range, dashed.'}
      </p>
      {problem && (
        <p class="field-error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
