import { useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { EventFeed } from '../components/event-feed';
import { EventNameOptions, useEventNames } from '../components/event-names';
import { FilterBar } from '../components/filter-bar';
import { Page } from '../components/layout';
import { MeasurePicker } from '../components/measure-picker';
import { Breakdown, DEFAULT_SERIES } from '../components/metrics-breakdown';
import { PlanNarrowing } from '../components/plan-narrowing';
import { SessionsCard } from '../components/sessions-card';
import { Empty, FailureNotice, Loading } from '../components/states';
import { ChangeNote, type Measures, Tiles } from '../components/tiles';
import { CHART_MARKS, type Series, TimeChart } from '../components/time-chart';
import { useAccount } from '../lib/account';
import { type Compare, type MetricsScope, metricsSummary, metricsTimeseries } from '../lib/contract-api';
import { readFilters, writeFilters } from '../lib/filters';
import { formatCount, formatDate, formatDateTime, isoDay } from '../lib/format';
import { type ChartInterval, hourlyAllowed, MAX_BUCKETS, MAX_HOURLY_DAYS, partialBucketIndex } from '../lib/intervals';
import { formatMeasure, measureLabel, readMeasure } from '../lib/measures';
import { useResource } from '../lib/use-resource';

type Interval = ChartInterval;

const RANGES = [7, 30, 90, 365] as const;

const INTERVAL_UNITS: Record<Interval, string> = { hour: 'hours', day: 'days', week: 'weeks', month: 'months' };
/** The summary's tiles: asked by name, so that the chosen measure can be asked beside them. */
const TILE_MEASURES = [
  'event_count',
  'unique_event_users',
  'feedback_count',
  'vote_count',
  'comment_count',
  'sdk_users',
  'new_sdk_users',
  'active_sdk_users',
  'paying_users',
  'total_mrr',
  'voter_mrr',
];

/**
 * The metrics page's state is its URL: range, interval, the one event charted, the filters (the
 * API's JSON list), the measure, the comparison, the breakdown and the feed's cursor.
 */
function readQuery(query: Record<string, string>) {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  const to = query.to && day.test(query.to) ? query.to : isoDay(0);
  const from = query.from && day.test(query.from) ? query.from : isoDay(29);
  const interval: Interval = query.interval === 'hour' || query.interval === 'week' || query.interval === 'month' ? query.interval : 'day';
  const by = query.by === 'property' ? 'property' : 'event_name';
  const property = query.prop?.trim() || 'plan';
  const event = query.event?.trim() || undefined;
  const filters = readFilters(query.filters);
  const measure = readMeasure(query.measure);
  const compare: Compare | undefined = query.compare === 'previous_period' || query.compare === 'previous_year' ? query.compare : undefined;
  return { from, to, interval, by, property, cursor: query.cursor, event, filters, measure, compare };
}

export function MetricsPage() {
  const { params } = useRoute();
  const { query, path, route } = useLocation();
  const projectId = params.id ?? '';
  const q = readQuery(query);
  const account = useAccount();
  // A shared link may ask for hours over a window they cannot cover: it is drawn by the day.
  const interval: Interval =
    q.interval === 'hour' && !hourlyAllowed(q.from, q.to, account?.limits.metrics_window_days) ? 'day' : q.interval;
  // What every card of the page reads: the same window, event, filters and comparison.
  const scope: MetricsScope = useMemo(
    () => ({ from: q.from, to: q.to, event: q.event, filters: q.filters, compare: q.compare }),
    [q.from, q.to, q.event, query.filters, q.compare],
  );
  const scopeKey = `${q.from}|${q.to}|${q.event ?? ''}|${query.filters ?? ''}|${q.compare ?? ''}`;

  const go = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(query);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    route(`${path}?${next.toString()}`);
  };

  const summary = useResource(
    () => metricsSummary(projectId, scope, q.measure ? [...TILE_MEASURES, q.measure] : TILE_MEASURES),
    [projectId, scopeKey, q.measure],
  );

  return (
    <Page title="Metrics" projectId={projectId}>
      {/* Alerts live beside the metrics they watch: the header's row of pages is full at 1280 px. */}
      <p class="inbox-links">
        <a href={`/projects/${projectId}/alerts`}>Alerts: be told when a measure moves →</a>
      </p>
      <RangeForm
        key={`${q.from}|${q.to}|${interval}|${q.event ?? ''}`}
        projectId={projectId}
        from={q.from}
        to={q.to}
        interval={interval}
        event={q.event}
        planWindowDays={account?.limits.metrics_window_days}
        onApply={(from, to, interval, event) =>
          go({ from, to, interval: interval === 'day' ? undefined : interval, event, cursor: undefined })
        }
      />
      <FilterBar
        projectId={projectId}
        from={q.from}
        to={q.to}
        event={q.event}
        filters={q.filters}
        onChange={(filters) => go({ filters: writeFilters(filters), cursor: undefined })}
      />
      <MeasurePicker
        key={q.measure ?? ''}
        projectId={projectId}
        from={q.from}
        to={q.to}
        event={q.event}
        measure={q.measure}
        compare={q.compare !== undefined}
        onMeasure={(measure) => go({ measure })}
        onCompare={(on) => go({ compare: on ? 'previous_period' : undefined })}
      />
      {summary.data && <PlanNarrowing echo={summary.data} />}
      <section aria-labelledby="summary-heading">
        <h2 id="summary-heading">Summary</h2>
        {summary.state === 'failed' && <FailureNotice failure={summary.failure} onRetry={summary.reload} />}
        {summary.state === 'loading' && !summary.data && <Loading what="the summary" />}
        {summary.data?.compare && (
          <p class="muted" data-testid="compare-window">
            Compared with {formatDate(summary.data.compare.date_from)} to {formatDate(summary.data.compare.date_to)}
            {summary.data.compare.retention_clamped ? ' (narrowed by your plan’s window)' : ''}.
          </p>
        )}
        {summary.data && q.measure && (
          <dl class="tiles">
            <div class="tile tile-chosen">
              <dt>{measureLabel(q.measure)}</dt>
              <dd data-testid="tile-measure">{formatMeasure(q.measure, summary.data.measures[q.measure])}</dd>
              {summary.data.compare && <ChangeNote change={summary.data.compare.change[q.measure]} />}
            </div>
          </dl>
        )}
        {summary.data && <Tiles measures={summary.data.measures as Measures} changes={summary.data.compare?.change} />}
      </section>
      <Timeseries projectId={projectId} scope={scope} scopeKey={scopeKey} interval={interval} measure={q.measure} />
      <SessionsCard projectId={projectId} scope={scope} scopeKey={scopeKey} interval={interval} />
      <Breakdown
        projectId={projectId}
        scope={scope}
        scopeKey={scopeKey}
        measure={q.measure}
        by={q.by}
        property={q.property}
        onChange={(by, prop) => go({ by, prop })}
      />
      <EventFeed
        projectId={projectId}
        from={q.from}
        to={q.to}
        event={q.event}
        filtered={q.filters.length > 0}
        cursor={q.cursor}
        query={query}
        path={path}
      />
    </Page>
  );
}

function RangeForm({
  projectId,
  from,
  to,
  interval,
  event,
  planWindowDays,
  onApply,
}: {
  projectId: string;
  from: string;
  to: string;
  interval: Interval;
  event: string | undefined;
  planWindowDays: number | undefined;
  onApply: (from: string, to: string, interval: Interval, event: string | undefined) => void;
}) {
  // Keyed by the applied range: when the URL changes (a quick range, the back button) the form
  // starts again from it.
  const [draft, setDraft] = useState({ from, to, interval, event: event ?? '' });
  const names = useEventNames(projectId, from, to);
  const validDraft = /^\d{4}-\d{2}-\d{2}$/.test(draft.from) && /^\d{4}-\d{2}-\d{2}$/.test(draft.to);
  const hourOk = !validDraft || hourlyAllowed(draft.from, draft.to, planWindowDays);
  // Only what the API answers is offered: a window too long for hours is drawn by the day.
  const apply = (nextFrom: string, nextTo: string, wanted: Interval) =>
    onApply(
      nextFrom,
      nextTo,
      wanted === 'hour' && !hourlyAllowed(nextFrom, nextTo, planWindowDays) ? 'day' : wanted,
      draft.event.trim() || undefined,
    );
  return (
    <form
      class="card filters"
      aria-label="Date range"
      onSubmit={(e) => {
        e.preventDefault();
        apply(draft.from, draft.to, draft.interval);
      }}
    >
      <div class="field">
        <label for="date-from">From</label>
        <DateInput id="date-from" required value={draft.from} onChange={(from) => setDraft((d) => ({ ...d, from }))} />
      </div>
      <div class="field">
        <label for="date-to">To</label>
        <DateInput id="date-to" required value={draft.to} onChange={(to) => setDraft((d) => ({ ...d, to }))} />
      </div>
      <div class="field">
        <label for="interval">Interval</label>
        <select
          id="interval"
          value={hourOk || draft.interval !== 'hour' ? draft.interval : 'day'}
          aria-describedby="interval-help"
          onChange={(e) => setDraft({ ...draft, interval: e.currentTarget.value as Interval })}
        >
          <option value="hour" disabled={!hourOk}>
            Hour{hourOk ? '' : ` (up to ${MAX_HOURLY_DAYS} days)`}
          </option>
          <option value="day">Day</option>
          <option value="week">Week</option>
          <option value="month">Month</option>
        </select>
      </div>
      <div class="field">
        <label for="chart-event">Event (all when empty)</label>
        <input
          id="chart-event"
          list="metrics-event-names"
          value={draft.event}
          autoComplete="off"
          maxLength={200}
          onInput={(e) => setDraft({ ...draft, event: e.currentTarget.value })}
        />
        <EventNameOptions id="metrics-event-names" names={names.data?.event_names} />
      </div>
      <button type="submit" class="primary">
        Apply
      </button>
      <p id="interval-help" class="muted field-note">
        {hourOk
          ? `By the hour for windows up to ${MAX_HOURLY_DAYS} days (${MAX_BUCKETS.toLocaleString('en-US')} points at most); by the week or month for a long range.`
          : `This window is longer than ${MAX_HOURLY_DAYS} days: it is drawn by the day, week or month (at most ${MAX_BUCKETS.toLocaleString('en-US')} points).`}
      </p>
      <fieldset class="quick-ranges" aria-label="Quick ranges">
        {RANGES.map((days) => (
          <button type="button" key={days} onClick={() => apply(isoDay(days - 1), isoDay(0), draft.interval)}>
            Last {days} days
          </button>
        ))}
      </fieldset>
    </form>
  );
}

const SERIES_COLORS = ['#3b5bdb', '#c2255c'];

function Timeseries({
  projectId,
  scope,
  scopeKey,
  interval,
  measure,
}: {
  projectId: string;
  scope: MetricsScope;
  scopeKey: string;
  interval: Interval;
  measure: string | undefined;
}) {
  const measures = measure ? [measure] : DEFAULT_SERIES;
  const result = useResource(async () => {
    for (const name of Object.values(CHART_MARKS)) {
      performance.clearMarks(name);
      performance.clearMeasures(name);
    }
    const data = await metricsTimeseries(projectId, scope, interval, measures);
    performance.mark(CHART_MARKS.response);
    return { data, measures };
  }, [projectId, scopeKey, interval, measure]);
  // The items completed in the range, marked on the chart; the chart does not wait for them.
  const shipped = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/insights/ship-dates', {
          params: { path: { id: projectId }, query: { date_from: scope.from, date_to: scope.to } },
        }),
      ),
    [projectId, scope.from, scope.to],
  );
  const marks = useMemo(
    () => (shipped.data?.items ?? []).map((item) => ({ time: Date.parse(item.shipped_at) / 1000, label: `Shipped: ${item.title}` })),
    [shipped.data],
  );

  // Everything drawn comes from one answer, its interval included: while the next answer loads
  // (the interval was just switched), the previous one stays drawn on its own axis, never daily
  // counts on an hourly axis.
  const chart = useMemo(() => {
    if (!result.data) return null;
    const { data, measures: drawnMeasures } = result.data;
    const drawnInterval: Interval = (['hour', 'day', 'week', 'month'] as const).find((i) => i === data.interval) ?? 'day';
    const times = data.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
    const series: Series[] = drawnMeasures.map((name, index) => ({
      label: measureLabel(name),
      values: data.buckets.map((b) => b.measures[name] ?? (name.includes(':') ? null : 0)),
      color: SERIES_COLORS[index % SERIES_COLORS.length] as string,
    }));
    // The earlier period, dashed, bucket by bucket at the same positions (the API aligns them).
    if (data.compare) {
      const earlier = data.compare.buckets;
      for (const [index, name] of drawnMeasures.entries()) {
        series.push({
          label: `${measureLabel(name)} (previous period)`,
          values: data.buckets.map((_, i) => earlier[i]?.measures[name] ?? null),
          color: SERIES_COLORS[index % SERIES_COLORS.length] as string,
          dash: [5, 4],
        });
      }
    }
    const partialIndex = partialBucketIndex(times, drawnInterval);
    const first = drawnMeasures[0] as string;
    const total = first === 'event_count' ? (series[0]?.values.reduce<number>((sum, v) => sum + (v ?? 0), 0) ?? 0) : null;
    const span = `${data.buckets.length} ${INTERVAL_UNITS[drawnInterval]} from ${formatDate(data.date_from)} to ${formatDate(data.date_to)}`;
    const summary =
      total !== null
        ? `${formatCount(total)} events in ${span}`
        : `${measureLabel(first)} in ${span}${data.compare ? ', with the previous period dashed' : ''}`;
    return { times, series, summary, total, interval: drawnInterval, partialIndex, measures: drawnMeasures, data };
  }, [result.data]);
  const stale = result.state === 'loading' && chart !== null && chart.interval !== interval;

  return (
    <section aria-labelledby="timeseries-heading" class="card" aria-busy={result.state === 'loading'}>
      <h2 id="timeseries-heading">
        {measure ? measureLabel(measure) : 'Events'} per {(chart?.interval ?? interval).toString()}
        {scope.event && <span class="muted"> · {scope.event}</span>}
      </h2>
      {result.state === 'failed' && <FailureNotice failure={result.failure} onRetry={result.reload} />}
      {result.state === 'loading' && (!result.data || stale) && <Loading what={`the chart by the ${interval}`} />}
      {chart && (
        <>
          <TimeChart
            times={chart.times}
            series={chart.series}
            interval={chart.interval}
            summary={chart.summary}
            partialIndex={chart.partialIndex}
            marks={marks}
          />
          <p class="muted" data-testid="chart-summary">
            {chart.summary}.
          </p>
          {chart.data.compare && (
            <p class="muted" data-testid="chart-compare">
              Dashed: the previous period, {formatDate(chart.data.compare.date_from)} to {formatDate(chart.data.compare.date_to)}, bucket by
              bucket.
            </p>
          )}
          {shipped.data && shipped.data.items.length > 0 && (
            <div data-testid="ship-dates">
              <p class="muted ship-dates-title">Shipped in this range (the dashed green lines):</p>
              <ul class="ship-dates">
                {shipped.data.items.map((item) => (
                  <li key={item.feedback_id}>
                    <a href={`/projects/${projectId}/feedback/${item.feedback_id}`}>{item.title}</a>{' '}
                    <span class="muted">{formatDateTime(item.shipped_at)}</span>
                  </li>
                ))}
              </ul>
            </div>
          )}
          {chart.partialIndex !== null && (
            <p class="muted" data-testid="partial-note">
              The last {chart.interval} is not over yet: its point (dashed, shaded) counts the events so far.
            </p>
          )}
          {chart.total === 0 && <Empty>No events in this range yet.</Empty>}
        </>
      )}
    </section>
  );
}
