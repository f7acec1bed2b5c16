import { useMemo } from 'preact/hooks';
import { type MetricsScope, metricsBreakdown, metricsSummary, metricsTimeseries } from '../lib/contract-api';
import { formatDate } from '../lib/format';
import { type ChartInterval, partialBucketIndex } from '../lib/intervals';
import { formatMeasure, measureLabel } from '../lib/measures';
import { useResource } from '../lib/use-resource';
import { ScrollRegion } from './scroll-region';
import { FailureNotice, Loading } from './states';
import { ChangeNote, ChangeText } from './tiles';
import { type Series, TimeChart } from './time-chart';

const SESSION_MEASURES = ['sessions', 'session_duration_avg', 'session_duration_median', 'bounce_rate', 'events_per_session'];
const COLOR = '#0b7285';
const ENTRY_MEASURES = ['sessions', 'bounce_rate', 'session_duration_median'];

/**
 * Sessions (docs/sessions.md): a user's run of events with no gap longer than the project's
 * session timeout. The card's tiles are the summary's session measures, its chart the sessions
 * per bucket (each counted in the bucket where it starts), in the page's scope: a filter keeps the
 * sessions that hold a matching event.
 */
export function SessionsCard({
  projectId,
  scope,
  scopeKey,
  interval,
}: {
  projectId: string;
  scope: MetricsScope;
  scopeKey: string;
  interval: ChartInterval;
}) {
  const summary = useResource(() => metricsSummary(projectId, scope, SESSION_MEASURES), [projectId, scopeKey]);
  const series = useResource(() => metricsTimeseries(projectId, scope, interval, ['sessions']), [projectId, scopeKey, interval]);
  // Where sessions begin: the first event's name (`entry_event`), top 10.
  const entries = useResource(() => metricsBreakdown(projectId, scope, 'entry_event', ENTRY_MEASURES, 10), [projectId, scopeKey]);
  const chart = useMemo(() => {
    const data = series.data;
    if (!data) return null;
    const drawn = (['hour', 'day', 'week', 'month'] as const).find((i) => i === data.interval) ?? 'day';
    const times = data.buckets.map((b) => Date.parse(b.start) / 1000);
    const lines: Series[] = [{ label: 'Sessions', values: data.buckets.map((b) => b.measures.sessions ?? 0), color: COLOR }];
    if (data.compare) {
      const earlier = data.compare.buckets;
      lines.push({
        label: 'Sessions (previous period)',
        values: data.buckets.map((_, i) => earlier[i]?.measures.sessions ?? null),
        color: COLOR,
        dash: [5, 4],
      });
    }
    const total = data.buckets.reduce((sum, b) => sum + (b.measures.sessions ?? 0), 0);
    const text = `${formatMeasure('sessions', total)} sessions from ${formatDate(data.date_from)} to ${formatDate(data.date_to)}`;
    return { times, lines, interval: drawn, summary: text, partialIndex: partialBucketIndex(times, drawn) };
  }, [series.data]);

  return (
    <section class="card" aria-labelledby="sessions-heading" data-testid="sessions-card">
      <h2 id="sessions-heading">Sessions</h2>
      {summary.state === 'failed' && <FailureNotice failure={summary.failure} onRetry={summary.reload} />}
      {summary.state === 'loading' && !summary.data && <Loading what="sessions" />}
      {summary.data && (
        <dl class="tiles">
          {SESSION_MEASURES.map((name) => (
            <div class="tile" key={name}>
              <dt>{measureLabel(name)}</dt>
              <dd data-testid={`session-tile-${name}`}>{formatMeasure(name, summary.data?.measures[name])}</dd>
              {summary.data?.compare && <ChangeNote change={summary.data.compare.change[name]} />}
            </div>
          ))}
        </dl>
      )}
      {series.state === 'failed' && !summary.failure && <FailureNotice failure={series.failure} onRetry={series.reload} />}
      {chart && (
        <TimeChart
          times={chart.times}
          series={chart.lines}
          interval={chart.interval}
          summary={chart.summary}
          partialIndex={chart.partialIndex}
          secondary
        />
      )}
      {entries.data && entries.data.rows.length > 0 && (
        <ScrollRegion label="Sessions by entry event">
          <table class="data-table" data-testid="sessions-by-entry">
            <thead>
              <tr>
                <th scope="col">Entry event</th>
                {ENTRY_MEASURES.map((name) => (
                  <th scope="col" class="num" key={name}>
                    {measureLabel(name)}
                  </th>
                ))}
                {entries.data.compare && (
                  <th scope="col" class="num">
                    Sessions: change
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {entries.data.rows.map((row) => (
                <tr key={row.key ?? '(none)'}>
                  <td>{row.key ?? <span class="muted">(not set)</span>}</td>
                  {ENTRY_MEASURES.map((name) => (
                    <td class="num" key={name}>
                      {formatMeasure(name, row.measures[name])}
                    </td>
                  ))}
                  {entries.data?.compare && (
                    <td class="num">
                      <ChangeText change={row.change?.sessions} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      <p class="muted">
        A session is a user's run of events with no gap longer than the project's session timeout (30 minutes unless set in the project); it
        counts in the {interval} it starts. A bounce is a session of one event.
      </p>
    </section>
  );
}
