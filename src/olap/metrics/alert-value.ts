import { type AlertInterval, intervalBefore, type Span } from '../../core/alerts.js';
import type { ClickHouseClient } from '../clickhouse.js';
import type { FilterList } from '../filter-types.js';
import type { Measure } from './measures.js';
import { type MetricsTarget, timeseries } from './metrics.planner.js';

/** An alert's metrics question, as the metrics API asks it (docs/notifications.md "Alerts"). */
export type AlertQuestion = {
  measure: Measure;
  event?: string | undefined;
  filters: FilterList;
  interval: AlertInterval;
};

/** One interval's value (null: the measure has none), and whether the plan's window covered it. */
export type IntervalValue = { start: Date; end: Date; value: number | null; covered: boolean };

export type AlertSeries = {
  intervals: IntervalValue[];
  /** The request's echo: the plan's window and scope, as the metrics API answers them. */
  retention_clamped: boolean;
  retention_window_days: number;
  event_scope: 'all' | 'predefined_only';
  date_from: string;
  date_to: string;
};

const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/**
 * The values of an alert's measure for `count` consecutive intervals ending with `last`, read as ONE
 * request of the metrics API would read them: GET /projects/:id/metrics/timeseries with
 * `interval`, `measures=<measure>`, `event`, `filters`, `date_from` the first interval's first day
 * and `date_to` the last interval's last day (or `until`'s day, for an interval still running). So
 * every value is the bucket that request answers, with the plan's rules exactly as it applies
 * them: custom events left out below Pro, the window clamped to the plan's allowance (an interval
 * the clamped window does not wholly cover is `covered: false`, its value null), and the active
 * users' trailing days read no further back than that allowance, counted from date_to.
 */
export async function alertSeries(
  client: ClickHouseClient,
  target: MetricsTarget,
  question: AlertQuestion,
  last: Span,
  count: number,
  until: Date = last.end,
): Promise<AlertSeries> {
  const first = intervalBefore(last, question.interval, count - 1);
  const end = until < last.end ? until : last.end;
  const dateTo = isoDay(new Date(Math.max(end.getTime(), last.start.getTime() + 1) - 1));
  const answer = await timeseries(client, target, {
    date_from: isoDay(first.start),
    date_to: dateTo,
    measures: [question.measure],
    event: question.event,
    filters: question.filters,
    interval: question.interval,
  });
  const windowStart = Date.parse(`${answer.date_from}T00:00:00Z`);
  const byStart = new Map(answer.buckets.map((bucket) => [Date.parse(bucket.start), bucket.measures]));
  const intervals: IntervalValue[] = [];
  for (let i = count - 1; i >= 0; i -= 1) {
    const span = intervalBefore(last, question.interval, i);
    const covered = span.start.getTime() >= windowStart;
    const measures = byStart.get(span.start.getTime()) as Record<string, number | null | undefined> | undefined;
    const raw = measures?.[question.measure];
    intervals.push({ start: span.start, end: span.end, value: covered && raw !== undefined ? raw : null, covered });
  }
  return {
    intervals,
    retention_clamped: answer.retention_clamped,
    retention_window_days: answer.retention_window_days,
    event_scope: answer.event_scope,
    date_from: answer.date_from,
    date_to: answer.date_to,
  };
}

/**
 * The value of an alert's measure for the interval `span` and for the interval before it (for
 * increase and decrease), as one timeseries request over the two (alertSeries).
 */
export async function alertValue(
  client: ClickHouseClient,
  target: MetricsTarget,
  question: AlertQuestion,
  span: Span,
  until: Date = span.end,
): Promise<{ value: number | null; previous: number | null; series: AlertSeries }> {
  const series = await alertSeries(client, target, question, span, 2, until);
  const [before, now] = series.intervals;
  return { value: now?.value ?? null, previous: before?.value ?? null, series };
}
