import { useMemo, useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { EventsTable } from '../components/events-table';
import { Page } from '../components/layout';
import { PlanNarrowing } from '../components/plan-narrowing';
import { ScrollRegion } from '../components/scroll-region';
import { Empty, FailureNotice, Loading } from '../components/states';
import { Tiles } from '../components/tiles';
import { CHART_MARKS, type Series, TimeChart } from '../components/time-chart';
import { useAccount } from '../lib/account';
import { formatCount, formatDateTime, isoDay } from '../lib/format';
import { type ChartInterval, hourlyAllowed, MAX_BUCKETS, MAX_HOURLY_DAYS, partialBucketIndex } from '../lib/intervals';
import { useResource } from '../lib/use-resource';

type Interval = ChartInterval;

const PRO_FEED = 'The raw event feed is part of the Pro and Team plans.';
const PRO_EVENT_NAMES = 'Breakdowns by event name are part of the Pro and Team plans.';
const RANGES = [7, 30, 90, 365] as const;
const FEED_PAGE = 25;

/** The metrics page's state is its URL: range, interval, breakdown and the feed's cursor. */
function readQuery(query: Record<string, string>) {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  const to = query.to && day.test(query.to) ? query.to : isoDay(0);
  const from = query.from && day.test(query.from) ? query.from : isoDay(29);
  const interval: Interval = query.interval === 'hour' ? 'hour' : 'day';
  const by = query.by === 'property' ? 'property' : 'event_name';
  const property = query.prop?.trim() || 'plan';
  return { from, to, interval, by, property, cursor: query.cursor };
}

export function MetricsPage() {
  const { params } = useRoute();
  const { query, path, route } = useLocation();
  const projectId = params.id ?? '';
  const q = readQuery(query);
  const range = { date_from: q.from, date_to: q.to };
  const account = useAccount();
  // A shared link may ask for hours over a window they cannot cover: it is drawn by the day.
  const interval: Interval =
    q.interval === 'hour' && !hourlyAllowed(q.from, q.to, account?.limits.metrics_window_days) ? 'day' : q.interval;

  const go = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(query);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    route(`${path}?${next.toString()}`);
  };

  const summary = useResource(
    () => unwrap(api.GET('/projects/{id}/metrics/summary', { params: { path: { id: projectId }, query: range } })),
    [projectId, q.from, q.to],
  );

  return (
    <Page title="Metrics" projectId={projectId}>
      <RangeForm
        key={`${q.from}|${q.to}|${interval}`}
        from={q.from}
        to={q.to}
        interval={interval}
        planWindowDays={account?.limits.metrics_window_days}
        onApply={(from, to, interval) => go({ from, to, interval: interval === 'day' ? undefined : interval, cursor: undefined })}
      />
      {summary.data && <PlanNarrowing echo={summary.data} />}
      <section aria-labelledby="summary-heading">
        <h2 id="summary-heading">Summary</h2>
        {summary.state === 'failed' && <FailureNotice failure={summary.failure} onRetry={summary.reload} />}
        {summary.state === 'loading' && !summary.data && <Loading what="the summary" />}
        {summary.data && <Tiles measures={summary.data.measures} />}
      </section>
      <Timeseries projectId={projectId} from={q.from} to={q.to} interval={interval} />
      <Breakdown projectId={projectId} from={q.from} to={q.to} by={q.by} property={q.property} onChange={(by, prop) => go({ by, prop })} />
      <EventFeed projectId={projectId} from={q.from} to={q.to} cursor={q.cursor} query={query} path={path} />
    </Page>
  );
}

function RangeForm({
  from,
  to,
  interval,
  planWindowDays,
  onApply,
}: {
  from: string;
  to: string;
  interval: Interval;
  planWindowDays: number | undefined;
  onApply: (from: string, to: string, interval: Interval) => void;
}) {
  // Keyed by the applied range: when the URL changes (a quick range, the back button) the form
  // starts again from it.
  const [draft, setDraft] = useState({ from, to, interval });
  const validDraft = /^\d{4}-\d{2}-\d{2}$/.test(draft.from) && /^\d{4}-\d{2}-\d{2}$/.test(draft.to);
  const hourOk = !validDraft || hourlyAllowed(draft.from, draft.to, planWindowDays);
  // Only what the API answers is offered: a window too long for hours is drawn by the day.
  const apply = (nextFrom: string, nextTo: string, wanted: Interval) =>
    onApply(nextFrom, nextTo, wanted === 'hour' && !hourlyAllowed(nextFrom, nextTo, planWindowDays) ? 'day' : wanted);
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
          value={hourOk ? draft.interval : 'day'}
          aria-describedby="interval-help"
          onChange={(e) => setDraft({ ...draft, interval: e.currentTarget.value as Interval })}
        >
          <option value="day">Day</option>
          <option value="hour" disabled={!hourOk}>
            Hour{hourOk ? '' : ` (up to ${MAX_HOURLY_DAYS} days)`}
          </option>
        </select>
      </div>
      <button type="submit" class="primary">
        Apply
      </button>
      <p id="interval-help" class="muted field-note">
        {hourOk
          ? `By the hour for windows up to ${MAX_HOURLY_DAYS} days (${MAX_BUCKETS.toLocaleString('en-US')} points at most).`
          : `This window is longer than ${MAX_HOURLY_DAYS} days: it is drawn by the day (at most ${MAX_BUCKETS.toLocaleString('en-US')} points).`}
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

function Timeseries({ projectId, from, to, interval }: { projectId: string; from: string; to: string; interval: Interval }) {
  const result = useResource(async () => {
    for (const name of Object.values(CHART_MARKS)) {
      performance.clearMarks(name);
      performance.clearMeasures(name);
    }
    const data = await unwrap(
      api.GET('/projects/{id}/metrics/timeseries', {
        params: {
          path: { id: projectId },
          query: { date_from: from, date_to: to, interval, measures: ['event_count', 'unique_event_users'] },
        },
      }),
    );
    performance.mark(CHART_MARKS.response);
    return data;
  }, [projectId, from, to, interval]);
  // The items completed in the range, marked on the chart; the chart does not wait for them.
  const shipped = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/insights/ship-dates', { params: { path: { id: projectId }, query: { date_from: from, date_to: to } } }),
      ),
    [projectId, from, to],
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
    const drawnInterval: Interval = result.data.interval === 'hour' ? 'hour' : 'day';
    const buckets = result.data.buckets;
    const times = buckets.map((bucket) => Date.parse(bucket.start) / 1000);
    const series: Series[] = [
      { label: 'Events', values: buckets.map((b) => b.measures.event_count ?? 0), color: SERIES_COLORS[0] as string },
      { label: 'Unique users', values: buckets.map((b) => b.measures.unique_event_users ?? 0), color: SERIES_COLORS[1] as string },
    ];
    const partialIndex = partialBucketIndex(times, drawnInterval);
    const total = series[0]?.values.reduce((sum, v) => sum + v, 0) ?? 0;
    const unit = drawnInterval === 'hour' ? 'hours' : 'days';
    const summary = `${formatCount(total)} events in ${buckets.length} ${unit} from ${result.data.date_from} to ${result.data.date_to}`;
    return { times, series, summary, total, interval: drawnInterval, partialIndex };
  }, [result.data]);
  const stale = result.state === 'loading' && chart !== null && chart.interval !== interval;

  return (
    <section aria-labelledby="timeseries-heading" class="card" aria-busy={result.state === 'loading'}>
      <h2 id="timeseries-heading">Events per {chart?.interval ?? interval}</h2>
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

function Breakdown(props: {
  projectId: string;
  from: string;
  to: string;
  by: string;
  property: string;
  onChange: (by: string, prop?: string) => void;
}) {
  const { projectId, from, to, by, property, onChange } = props;
  const dimension = by === 'property' ? `property.${property}` : 'event_name';
  const [draftProperty, setDraftProperty] = useState(property);
  const result = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/metrics/breakdown', {
          params: {
            path: { id: projectId },
            query: { date_from: from, date_to: to, dimension, measures: ['event_count', 'unique_event_users'], limit: 20 },
          },
        }),
      ),
    [projectId, from, to, dimension],
  );
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
      {result.data && result.data.rows.length === 0 && <Empty>No events in this range.</Empty>}
      {result.data && result.data.rows.length > 0 && (
        <ScrollRegion label="Breakdown rows">
          <table class="data-table">
            <thead>
              <tr>
                <th scope="col">{by === 'property' ? property : 'Event name'}</th>
                <th scope="col" class="num">
                  Events
                </th>
                <th scope="col" class="num">
                  Unique users
                </th>
              </tr>
            </thead>
            <tbody>
              {result.data.rows.map((row) => (
                <tr key={row.key ?? '(none)'}>
                  <td>{row.key ?? <span class="muted">(not set)</span>}</td>
                  <td class="num">{formatCount(row.measures.event_count)}</td>
                  <td class="num">{formatCount(row.measures.unique_event_users)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </section>
  );
}

function EventFeed({
  projectId,
  from,
  to,
  cursor,
  query,
  path,
}: {
  projectId: string;
  from: string;
  to: string;
  cursor?: string | undefined;
  query: Record<string, string>;
  path: string;
}) {
  const result = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/metrics/events', {
          params: { path: { id: projectId }, query: { date_from: from, date_to: to, limit: FEED_PAGE, ...(cursor ? { cursor } : {}) } },
        }),
      ),
    [projectId, from, to, cursor],
  );
  const pageHref = (nextCursor: string | undefined) => {
    const next = new URLSearchParams(query);
    if (nextCursor) next.set('cursor', nextCursor);
    else next.delete('cursor');
    return `${path}?${next.toString()}#feed-heading`;
  };
  return (
    <section aria-labelledby="feed-heading" class="card">
      <h2 id="feed-heading">Event feed</h2>
      {result.state === 'failed' && <FailureNotice failure={result.failure} onRetry={result.reload} planHint={PRO_FEED} />}
      {result.state === 'loading' && !result.data && <Loading what="events" />}
      {result.data && result.data.events.length === 0 && <Empty>{cursor ? 'No older events.' : 'No events in this range yet.'}</Empty>}
      {result.data && result.data.events.length > 0 && <EventsTable events={result.data.events} label="Events" />}
      {result.data && (
        <nav aria-label="Event feed pages" class="link-row">
          {cursor && <a href={pageHref(undefined)}>Newest events</a>}
          {result.data.next_cursor && <a href={pageHref(result.data.next_cursor)}>Older events</a>}
        </nav>
      )}
    </section>
  );
}
