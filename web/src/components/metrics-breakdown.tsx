import { useState } from 'preact/hooks';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading } from '../components/states';
import { ChangeText } from '../components/tiles';
import { type MetricsScope, metricsBreakdown } from '../lib/contract-api';
import { formatDate } from '../lib/format';
import { formatMeasure, measureLabel } from '../lib/measures';
import { useResource } from '../lib/use-resource';

/* The metrics page's breakdown card: the window's measures per event name or per value of a property. */

const PRO_EVENT_NAMES = 'Breakdowns by event name are part of the Pro and Team plans.';
/** What a breakdown (and the chart) shows when no measure is chosen. */
export const DEFAULT_SERIES = ['event_count', 'unique_event_users'];

export function Breakdown(props: {
  projectId: string;
  scope: MetricsScope;
  scopeKey: string;
  measure: string | undefined;
  by: string;
  property: string;
  onChange: (by: string, prop?: string) => void;
}) {
  const { projectId, scope, scopeKey, measure, by, property, onChange } = props;
  const dimension = by === 'property' ? `property.${property}` : 'event_name';
  const [draftProperty, setDraftProperty] = useState(property);
  const measures = measure ? [measure, 'event_count'] : DEFAULT_SERIES;
  const result = useResource(
    async () => ({ data: await metricsBreakdown(projectId, scope, dimension, measures), measures }),
    [projectId, scopeKey, dimension, measure],
  );
  const answer = result.data?.data;
  const shown = result.data?.measures ?? measures;
  return (
    <section aria-labelledby="breakdown-heading" class="card">
      <h2 id="breakdown-heading">Breakdown</h2>
      <form
        class="filters"
        aria-label="Breakdown dimension"
        onSubmit={(e) => {
          e.preventDefault();
          onChange('property', draftProperty.trim() || 'plan');
        }}
      >
        <div class="field">
          <label for="breakdown-by">Group events by</label>
          <select
            id="breakdown-by"
            value={by}
            onChange={(e) => onChange(e.currentTarget.value, by === 'property' ? property : draftProperty)}
          >
            <option value="event_name">Event name</option>
            <option value="property">A property</option>
          </select>
        </div>
        {by === 'property' && (
          <>
            <div class="field">
              <label for="breakdown-property">Property name</label>
              <input
                id="breakdown-property"
                value={draftProperty}
                maxLength={100}
                onInput={(e) => setDraftProperty(e.currentTarget.value)}
              />
            </div>
            <button type="submit">Show</button>
          </>
        )}
      </form>
      {result.state === 'failed' && <FailureNotice failure={result.failure} onRetry={result.reload} planHint={PRO_EVENT_NAMES} />}
      {result.state === 'loading' && !result.data && <Loading what="the breakdown" />}
      {answer && answer.rows.length === 0 && <Empty>No events in this range.</Empty>}
      {answer && answer.rows.length > 0 && (
        <ScrollRegion label="Breakdown rows">
          <table class="data-table" data-testid="breakdown-table">
            <thead>
              <tr>
                <th scope="col">{by === 'property' ? property : 'Event name'}</th>
                {shown.map((name) => (
                  <th scope="col" class="num" key={name}>
                    {measureLabel(name)}
                  </th>
                ))}
                {answer.compare &&
                  shown.map((name) => (
                    <th scope="col" class="num" key={`change-${name}`}>
                      {measureLabel(name)}: change
                    </th>
                  ))}
              </tr>
            </thead>
            <tbody>
              {answer.rows.map((row) => (
                <tr key={row.key ?? '(none)'}>
                  <td>{row.key ?? <span class="muted">(not set)</span>}</td>
                  {shown.map((name) => (
                    <td class="num" key={name}>
                      {formatMeasure(name, row.measures[name])}
                    </td>
                  ))}
                  {answer.compare &&
                    shown.map((name) => (
                      <td class="num" key={`change-${name}`}>
                        <ChangeText change={row.change?.[name]} />
                      </td>
                    ))}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {answer?.compare && (
        <p class="muted">
          Change against the same key in the previous period ({formatDate(answer.compare.date_from)} to {formatDate(answer.compare.date_to)}
          ); "no earlier value" where it had none.
        </p>
      )}
    </section>
  );
}
