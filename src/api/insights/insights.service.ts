import { PLAN_LIMITS, type Plan } from '../../core/plans.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { eventNamesNamed, firstInvalidRegex } from '../../olap/filter-sql.js';
import type { FilterList } from '../../olap/filter-types.js';
import { eventNames } from '../../olap/insights/event-names.queries.js';
import { type FunnelRow, funnel } from '../../olap/insights/funnel.queries.js';
import { type PathEdgeRow, paths } from '../../olap/insights/paths.queries.js';
import type { InsightScope } from '../../olap/insights/query-rows.js';
import { retention } from '../../olap/insights/retention.queries.js';
import { isPredefinedEvent, PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import type { Echo } from '../../olap/metrics/metrics.planner.js';
import { type CompareKind, compareWindow, type MetricsWindow, resolveWindow } from '../../olap/metrics/window.js';
import type { FunnelBody, PathsBody, RetentionBody } from './insights.schema.js';

const DAY_MS = 86_400_000;

export type InsightsTarget = { projectId: string; plan: Plan };

/** The window, scope and echo of one request, with the plan's effects (SPEC 8.3), as the metrics API applies them. */
export type Prepared = { window: MetricsWindow; scope: InsightScope; echo: Echo };

/**
 * The plan's rules for an insights request: the window clamped to the allowance (a narrowed 200),
 * custom event names out of scope below Pro, and the 402 for a request that names one (SPEC 7.4
 * case 2: a filter naming a custom event), as an event field or an `event_name` filter of `filters`.
 */
export function prepare(
  target: InsightsTarget,
  dates: { dateFrom?: string | undefined; dateTo?: string | undefined },
  named: readonly string[],
  filters: readonly FilterList[] = [],
): Prepared {
  const allNames = PLAN_LIMITS[target.plan].customEventsReadable;
  const custom = [...named, ...filters.flatMap((list) => eventNamesNamed(list))].find((name) => !isPredefinedEvent(name));
  if (!allNames && custom !== undefined) {
    throw new MetricsError('METRICS_CUSTOM_EVENTS_REQUIRE_PRO', `the custom event "${custom}" requires the Pro or Team plan`);
  }
  const window = resolveWindow({ date_from: dates.dateFrom, date_to: dates.dateTo }, target.plan);
  return {
    window,
    scope: { projectId: target.projectId, start: window.start, end: window.end, names: allNames ? null : PREDEFINED_EVENTS },
    echo: echoOf(window, allNames),
  };
}

export const echoOf = (window: MetricsWindow, allNames: boolean): Echo => ({
  event_scope: allNames ? 'all' : 'predefined_only',
  retention_clamped: window.retentionClamped,
  retention_window_days: window.retentionWindowDays,
  date_from: window.dateFrom,
  date_to: window.dateTo,
});

/**
 * Refuses a regex filter the engine cannot compile, before any query runs: a 400 naming it by its
 * place in the body (`filters.0.value`, `steps.1.filters.0.value`).
 */
async function checkRegexes(client: ClickHouseClient, lists: readonly { base: string; filters: FilterList | undefined }[]) {
  for (const { base, filters } of lists) {
    const invalid = await firstInvalidRegex(client, filters ?? [], base);
    if (invalid) throw new MetricsError('METRICS_INVALID_PARAMETER', `${invalid.path}: ${invalid.reason}`);
  }
}

export type FunnelStepAnswer = {
  event_name: string;
  users: number;
  conversion_from_first: number | null;
  conversion_from_previous: number | null;
  median_seconds_to_convert: number | null;
};

const ratio = (part: number, whole: number | undefined) => (whole ? part / whole : null);

function stepAnswers(body: FunnelBody, row: FunnelRow | undefined): FunnelStepAnswer[] {
  const users = body.steps.map((_, k) => row?.users[k] ?? 0);
  return body.steps.map((step, k) => {
    const median = k === 0 ? null : (row?.median_ms[k] ?? null);
    return {
      event_name: step.eventName,
      users: users[k] ?? 0,
      conversion_from_first: ratio(users[k] ?? 0, users[0]),
      conversion_from_previous: k === 0 ? null : ratio(users[k] ?? 0, users[k - 1]),
      median_seconds_to_convert: median === null ? null : median / 1000,
    };
  });
}

/**
 * The earlier window of a compare (docs/insights.md, "Compare"), with the plan's allowance counted
 * back from date_to as the floor, as the metrics compare reads it: nothing before it is read.
 */
function earlier(p: Prepared, kind: CompareKind): { window: MetricsWindow; scope: InsightScope } {
  const floor = new Date(p.window.end.getTime() - p.window.retentionWindowDays * DAY_MS);
  const window = compareWindow(p.window, kind, floor);
  return { window, scope: { ...p.scope, start: window.start, end: window.end } };
}

/** POST /projects/:id/insights/funnel (docs/insights.md, "Funnel"). */
export async function funnelAnswer(client: ClickHouseClient, target: InsightsTarget, body: FunnelBody) {
  const p = prepare(
    target,
    body,
    body.steps.map((s) => s.eventName),
    [body.filters ?? [], ...body.steps.map((s) => s.filters ?? [])],
  );
  await checkRegexes(client, [
    { base: 'filters', filters: body.filters },
    ...body.steps.map((s, i) => ({ base: `steps.${i}.filters`, filters: s.filters })),
  ]);
  const query = { steps: body.steps, windowMs: body.conversionWindowSeconds * 1000, filters: body.filters };
  const before = body.compare === undefined ? undefined : earlier(p, body.compare);
  // An earlier window wholly before the plan's allowance reads nothing (start = end): no query.
  const readBefore = before !== undefined && before.scope.start < before.scope.end;
  const [overall, split, compared] = await Promise.all([
    funnel(client, p.scope, query),
    body.breakdown === undefined ? Promise.resolve([]) : funnel(client, p.scope, { ...query, breakdown: body.breakdown }),
    readBefore ? funnel(client, before.scope, query) : Promise.resolve([]),
  ]);
  const values = split
    .map((row) => ({ value: row.breakdown, steps: stepAnswers(body, row) }))
    // Most users at step 1 first; ties by value, the missing value last, so the order is stable.
    .sort(
      (a, b) =>
        (b.steps[0]?.users ?? 0) - (a.steps[0]?.users ?? 0) ||
        (a.value === null ? 1 : 0) - (b.value === null ? 1 : 0) ||
        String(a.value).localeCompare(String(b.value)),
    );
  return {
    ...p.echo,
    conversion_window_seconds: body.conversionWindowSeconds,
    breakdown: body.breakdown ?? null,
    steps: stepAnswers(body, overall[0]),
    breakdown_values: values,
    ...(before === undefined
      ? {}
      : {
          compare: {
            date_from: before.window.dateFrom,
            date_to: before.window.dateTo,
            retention_clamped: before.window.retentionClamped,
            steps: stepAnswers(body, compared[0]),
          },
        }),
  };
}

/** The first day of each cohort bucket overlapping the window, in order. */
function cohortStarts(window: MetricsWindow, interval: 'day' | 'week'): Date[] {
  const starts: Date[] = [];
  let start = window.start;
  if (interval === 'week') start = new Date(start.getTime() - ((start.getUTCDay() + 6) % 7) * DAY_MS);
  const step = interval === 'day' ? DAY_MS : 7 * DAY_MS;
  for (; start < window.end; start = new Date(start.getTime() + step)) starts.push(start);
  return starts;
}

/** POST /projects/:id/insights/retention (docs/insights.md, "Retention"). */
export async function retentionAnswer(client: ClickHouseClient, target: InsightsTarget, body: RetentionBody) {
  const named = [body.cohortEvent, body.returnEvent].filter((name): name is string => name !== undefined);
  const p = prepare(target, body, named, [body.filters ?? []]);
  await checkRegexes(client, [{ base: 'filters', filters: body.filters }]);
  const rows = await retention(client, p.scope, body);
  const counts = new Map(rows.map((row) => [`${row.cohort_start}/${row.period}`, row.users]));
  const step = body.interval === 'day' ? DAY_MS : 7 * DAY_MS;
  return {
    ...p.echo,
    interval: body.interval,
    periods: body.periods,
    cohort_event: body.cohortEvent ?? null,
    return_event: body.returnEvent ?? null,
    cohorts: cohortStarts(p.window, body.interval).map((start) => {
      const day = start.toISOString().slice(0, 10);
      // Periods that begin after the window's end cannot be measured yet: they are left out.
      const measurable = Math.min(body.periods, Math.floor((p.window.end.getTime() - 1 - start.getTime()) / step));
      const retained = Array.from({ length: measurable + 1 }, (_, period) => counts.get(`${day}/${period}`) ?? 0);
      return { cohort_start: day, users: retained[0] ?? 0, retained };
    }),
  };
}

/** Byte order of UTF-8 text, as ClickHouse compares strings (so ties break the same way on both sides). */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** Edges by users, most first; ties by step, then the names (byte order). */
export const edgeOrder = (a: PathEdgeRow, b: PathEdgeRow) =>
  b.users - a.users || a.step - b.step || byBytes(a.from, b.from) || byBytes(a.to, b.to);

/** POST /projects/:id/insights/paths (docs/insights.md, "Paths"). */
export async function pathsAnswer(client: ClickHouseClient, target: InsightsTarget, body: PathsBody) {
  if (body.startEvent !== undefined && body.endEvent !== undefined) {
    throw new MetricsError('METRICS_INVALID_PARAMETER', 'endEvent: give startEvent or endEvent, not both');
  }
  const anchor = body.startEvent ?? body.endEvent;
  if (anchor !== undefined && body.excludeEvents.includes(anchor)) {
    throw new MetricsError(
      'METRICS_INVALID_PARAMETER',
      `excludeEvents: must not hold the ${body.startEvent !== undefined ? 'start' : 'end'} event`,
    );
  }
  const named = [body.startEvent, body.endEvent, ...body.excludeEvents].filter((name): name is string => name !== undefined);
  const p = prepare(target, body, named, [body.filters ?? []]);
  await checkRegexes(client, [{ base: 'filters', filters: body.filters }]);
  const result = await paths(client, p.scope, body);
  return {
    ...p.echo,
    start_event: body.startEvent ?? null,
    end_event: body.endEvent ?? null,
    depth: body.depth,
    limit: body.limit,
    exclude_events: body.excludeEvents,
    users: result.users,
    edges: [...result.edges].sort(edgeOrder).slice(0, body.limit),
    paths: result.paths,
  };
}

/** GET /projects/:id/event-names: names seen in the window, most tracked first. */
export async function eventNamesAnswer(
  client: ClickHouseClient,
  target: InsightsTarget,
  query: { date_from?: string | undefined; date_to?: string | undefined; limit: number },
) {
  const p = prepare(target, { dateFrom: query.date_from, dateTo: query.date_to }, []);
  const rows = await eventNames(client, p.scope, query.limit);
  return {
    ...p.echo,
    event_names: rows.map((row) => ({ ...row, predefined: isPredefinedEvent(row.event_name) })),
  };
}
