import { PLAN_LIMITS } from '../../core/plans.js';
import type { ClickHouseClient } from '../clickhouse.js';
import { filterableKeys, propertyPaths, topValues } from './event-properties.queries.js';
import { isPredefinedEvent, PREDEFINED_EVENTS } from './measures.js';
import { MetricsError } from './metrics.errors.js';
import type { MetricsTarget } from './metrics.planner.js';
import type { NameFilter } from './metrics.queries.js';
import { resolveWindow } from './window.js';

export type EventPropertiesQuery = { event?: string | undefined; date_from?: string | undefined; date_to?: string | undefined };

type JsonValue = string | number | boolean;

/** A value's text as its JSON value: numbers and booleans by their JSON column type. */
function jsonValueOf(type: string, text: string): JsonValue {
  if (type === 'Bool') return text === 'true';
  if (type === 'Int64' || type === 'UInt64' || type === 'Float64') return Number(text);
  return text;
}

/**
 * The properties the filter bar can offer (docs/metrics.md, "Event properties"): each path seen on
 * the events in the window (of `event`, when given), as `properties.<path>`, with the JSON types it
 * was stored as and its most frequent values. The window and the event scope follow the metrics'
 * plan rules: clamped to the allowance, custom events left out below Pro, and `event` naming a
 * custom event below Pro is a 402. Paths whose keys a filter cannot name are left out.
 */
export async function eventProperties(client: ClickHouseClient, target: MetricsTarget, query: EventPropertiesQuery) {
  const window = resolveWindow(query, target.plan);
  const allNames = PLAN_LIMITS[target.plan].customEventsReadable;
  if (query.event !== undefined && !allNames && !isPredefinedEvent(query.event)) {
    throw new MetricsError(
      'METRICS_CUSTOM_EVENTS_REQUIRE_PRO',
      `the properties of the custom event "${query.event}" require the Pro or Team plan`,
    );
  }
  const names: NameFilter = query.event !== undefined ? [query.event] : allNames ? null : [...PREDEFINED_EVENTS];
  const scope = { projectId: target.projectId, start: window.start, end: window.end };
  const paths = (await propertyPaths(client, scope, names)).flatMap((row) => {
    const keys = filterableKeys(row.path);
    return keys ? [{ ...row, keys }] : [];
  });
  const values = await topValues(
    client,
    scope,
    names,
    paths.map((row) => row.keys),
  );
  return {
    date_from: window.dateFrom,
    date_to: window.dateTo,
    retention_clamped: window.retentionClamped,
    properties: paths.map((row, i) => ({
      property: `properties.${row.path}`,
      types: [...row.types].sort(),
      top_values: values.filter((v) => v.path_index === i).map((v) => ({ value: jsonValueOf(v.type, v.value), count: v.count })),
    })),
  };
}
