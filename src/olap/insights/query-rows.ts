import type { ClickHouseSettings } from '@clickhouse/client';
import { chTime } from '../time.js';

/** What every insights query is scoped to: one project, a half-open time range, an event scope. */
export type InsightScope = {
  projectId: string;
  /** First instant read. */
  start: Date;
  /** First instant after the range. */
  end: Date;
  /** The event names the plan lets the answer see; null: every name (Pro and Team). */
  names: readonly string[] | null;
};

export { chTime } from '../time.js';

/** The parameters of InsightScope, for the conditions of SCOPE_CONDITION. */
export const scopeParams = (scope: InsightScope) => ({
  projectId: scope.projectId,
  start: chTime(scope.start),
  end: chTime(scope.end),
  scopeNames: scope.names ?? [],
});

/** The rows of `events` (or of its copy `events_by_user`) an InsightScope lets a query read (the alias `e` is optional). */
export const scopeCondition = (scope: InsightScope, alias = '') =>
  `${alias}project_id = {projectId:UUID}
   AND ${alias}created_at >= {start:DateTime64(3, 'UTC')} AND ${alias}created_at < {end:DateTime64(3, 'UTC')}
   ${scope.names === null ? '' : `AND ${alias}event_name IN {scopeNames:Array(String)}`}`;

/** Rows of one parameterised query (one definition for all of src/olap). */
export { queryRows } from '../query-rows.js';

/**
 * The settings of a query that groups `events_by_user` by user (funnels, retention, paths): a hash
 * GROUP BY user_key (the user id as a UInt128, sql/clickhouse/010), not an aggregation in order. Issue 30 asked for the in-order one so that
 * memory would follow one user's rows; on chDB 3.4.0 it peaked higher and ran up to ten times
 * slower than hashing the same table, in every run (docs/clickhouse.md, "Why hashed and not in
 * order"; BENCHMARKS.md, "Issue 30: insights speed"). The user order still helps the hash: one
 * user's rows arrive together. Said explicitly so a server default cannot turn it back on.
 */
export const USER_ORDER_SETTINGS: ClickHouseSettings = { optimize_aggregation_in_order: 0 };

/**
 * A top-level event property as one comparable text: a string as it is, any other JSON value as
 * its JSON text, a missing key NULL (the metrics breakdown's reading, docs/metrics.md).
 */
export const propertyText = (keyParam: string) =>
  `if(NOT JSONHas(properties_raw, {${keyParam}:String}), NULL,
      if(JSONType(properties_raw, {${keyParam}:String}) = 'String',
         JSONExtractString(properties_raw, {${keyParam}:String}),
         JSONExtractRaw(properties_raw, {${keyParam}:String})))`;
