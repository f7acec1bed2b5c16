import { chTime } from '../time.js';
import { TENANT_TABLES } from './tenant-guard.js';

/** What one tenant query may see: one project, a window of time, and maybe only some event names. */
export type TenantScope = {
  projectId: string;
  /** First instant of the window. */
  start: Date;
  /** First instant after the window. */
  end: Date;
  /** Event names the plan may read (events and the rollups); null: every name. */
  eventNames: readonly string[] | null;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The row filters ClickHouse adds to every read of each tenant table (the session's
 * `additional_table_filters`), by table name and by `<database>.<table>`. They are written from the
 * service's own values only (the project id read from PostgreSQL, the window computed from the
 * plan, the plan's event names), each checked or quoted here, never from request text. The
 * engine matches a read of `default.events` by the name `events` too (measured), so both keys
 * carry the same filter.
 */
export function tenantTableFilters(scope: TenantScope, database: string): Record<string, string> {
  if (!UUID.test(scope.projectId)) throw new RangeError('tenant scope: the project id is not a UUID');
  const project = `project_id = toUUID(${literal(scope.projectId)})`;
  const names = scope.eventNames === null ? '' : ` AND event_name IN (${scope.eventNames.map(literal).join(', ') || "''"})`;
  const between = (column: string, from: string, to: string) => `${column} >= ${from} AND ${column} < ${to}`;
  const dateTime64 = (instant: Date, precision: number) => `toDateTime64(${literal(chTime(instant))}, ${precision}, 'UTC')`;
  const byTable: Record<(typeof TENANT_TABLES)[number], string> = {
    events: `${project} AND ${between('created_at', dateTime64(scope.start, 3), dateTime64(scope.end, 3))}${names}`,
    facts: `${project} AND ${between('occurred_at', dateTime64(scope.start, 6), dateTime64(scope.end, 6))}`,
    events_daily: `${project} AND ${between('day', `toDate(${literal(isoDay(scope.start))})`, `toDate(${literal(isoDay(scope.end))})`)}${names}`,
    events_hourly: `${project} AND ${between('hour', `toDateTime(${literal(chTime(scope.start).slice(0, 19))}, 'UTC')`, `toDateTime(${literal(chTime(scope.end).slice(0, 19))}, 'UTC')`)}${names}`,
  };
  const filters: Record<string, string> = {};
  for (const table of TENANT_TABLES) {
    filters[table] = byTable[table];
    filters[`${database}.${table}`] = byTable[table];
  }
  return filters;
}

/**
 * The row filters of the system tables the ClickHouse interface lets tools read (tenant-guard.ts,
 * INTROSPECTION_TABLES): only the service's database and its four tenant tables, so SHOW
 * DATABASES, SHOW TABLES and a tool's catalog see what the tenant may read and nothing else.
 * Measured on chDB 26.7: additional_table_filters applies to system tables as to any other.
 */
export function introspectionTableFilters(database: string): Record<string, string> {
  const db = literal(database);
  const tables = TENANT_TABLES.map(literal).join(', ');
  return {
    'system.databases': `name = ${db}`,
    'system.tables': `database = ${db} AND name IN (${tables})`,
    'system.columns': `database = ${db} AND table IN (${tables})`,
  };
}

const isoDay = (instant: Date) => instant.toISOString().slice(0, 10);

/** A ClickHouse string literal: backslash and quote escaped, so the value cannot end it early. */
function literal(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
