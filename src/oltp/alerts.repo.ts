import type { AlertChange, AlertCondition, AlertConditionType, AlertInterval, AlertState } from '../core/alerts.js';
import type { Plan } from '../core/plans.js';
import type { Sql, SqlLike } from './db.js';

/** How many checks of each alert are kept (GET …/alerts/:alertId/checks). */
export const KEPT_CHECKS = 100;

/** An alert as stored, with the integrations it notifies. */
export type AlertRow = {
  id: string;
  project_id: string;
  name: string;
  measure: string;
  event: string | null;
  filters: unknown[];
  interval_unit: AlertInterval;
  condition_type: AlertConditionType;
  condition_value: number;
  email: boolean;
  enabled: boolean;
  state: AlertState;
  last_value: number | null;
  last_checked_at: Date | null;
  checked_through: Date | null;
  integration_ids: string[];
  created_at: Date;
  updated_at: Date;
};

/** The fields an owner writes. */
export type AlertInput = {
  name: string;
  measure: string;
  event: string | null;
  filters: unknown[];
  interval: AlertInterval;
  condition: AlertCondition;
  integrationIds: string[];
  email: boolean;
  enabled: boolean;
};

export type AlertCheckRow = {
  id: string;
  alert_id: string;
  interval_start: Date;
  interval_end: Date;
  value: number | null;
  previous_value: number | null;
  change_percent: number | null;
  state: 'ok' | 'firing';
  notified: AlertChange | null;
  skipped: number;
  checked_at: Date;
};

/** The condition of a stored alert, in the API's shape. */
export const conditionOf = (row: Pick<AlertRow, 'condition_type' | 'condition_value'>): AlertCondition =>
  row.condition_type === 'above' || row.condition_type === 'below'
    ? { type: row.condition_type, value: row.condition_value }
    : { type: row.condition_type, percent: row.condition_value };

const conditionValue = (condition: AlertCondition) => ('value' in condition ? condition.value : condition.percent);

const alertColumns = (sql: SqlLike) => sql`
  a.id, a.project_id, a.name, a.measure, a.event, a.filters, a.interval_unit, a.condition_type, a.condition_value,
  a.email, a.enabled, a.state, a.last_value, a.last_checked_at, a.checked_through, a.created_at, a.updated_at,
  coalesce((select array_agg(ai.integration_id order by ai.integration_id) from alert_integrations ai where ai.alert_id = a.id), '{}') as integration_ids`;

/**
 * Which of `ids` are not integrations of the project (an unknown id, or another project's), and
 * which are issue trackers: the route refuses an alert naming one, before anything is written.
 */
export async function foreignIntegrationIds(
  sql: SqlLike,
  projectId: string,
  ids: string[],
): Promise<{ unknown: string[]; others: string[]; trackers: string[] }> {
  if (ids.length === 0) return { unknown: [], others: [], trackers: [] };
  const rows = await sql<
    { id: string; project_id: string; kind: string }[]
  >`select id, project_id, kind from integrations where id in ${sql(ids)}`;
  const found = new Map(rows.map((row) => [row.id, row.project_id]));
  return {
    unknown: ids.filter((id) => !found.has(id)),
    others: ids.filter((id) => found.has(id) && found.get(id) !== projectId),
    // An issue tracker takes no messages (docs/integrations.md).
    trackers: rows.filter((row) => row.project_id === projectId && (row.kind === 'github' || row.kind === 'linear')).map((row) => row.id),
  };
}

export type CreateAlertResult = { kind: 'created'; alert: AlertRow } | { kind: 'limit'; limit: number };

/**
 * Creates an alert and its integration links in one transaction, unless the project already has
 * `limit` alerts (the plan's, docs/notifications.md): the project row is locked first, so two
 * concurrent creations cannot both pass the count.
 */
export async function createAlert(sql: Sql, projectId: string, input: AlertInput, limit: number): Promise<CreateAlertResult> {
  return sql.begin(async (tx) => {
    await tx`select id from projects where id = ${projectId} for update`;
    const [{ count } = { count: 0 }] = await tx<
      { count: number }[]
    >`select count(*)::int as count from alerts where project_id = ${projectId}`;
    if (count >= limit) return { kind: 'limit' as const, limit };
    const [row] = await tx<{ id: string }[]>`
      insert into alerts (project_id, name, measure, event, filters, interval_unit, condition_type, condition_value, email, enabled)
      values (${projectId}, ${input.name}, ${input.measure}, ${input.event}, ${tx.json(input.filters as never)}, ${input.interval},
              ${input.condition.type}, ${conditionValue(input.condition)}, ${input.email}, ${input.enabled})
      returning id`;
    const id = (row as { id: string }).id;
    await linkIntegrations(tx, id, input.integrationIds);
    return { kind: 'created' as const, alert: (await findAlert(tx, projectId, id)) as AlertRow };
  });
}

async function linkIntegrations(sql: SqlLike, alertId: string, ids: string[]): Promise<void> {
  await sql`delete from alert_integrations where alert_id = ${alertId}`;
  if (ids.length > 0) {
    await sql`insert into alert_integrations ${sql(ids.map((integration_id) => ({ alert_id: alertId, integration_id })))}`;
  }
}

export async function listAlerts(sql: SqlLike, projectId: string): Promise<AlertRow[]> {
  return sql<AlertRow[]>`
    select ${alertColumns(sql)} from alerts a
    where a.project_id = ${projectId}
    order by a.created_at, a.id`;
}

export async function findAlert(sql: SqlLike, projectId: string, id: string): Promise<AlertRow | null> {
  const [row] = await sql<AlertRow[]>`select ${alertColumns(sql)} from alerts a where a.id = ${id} and a.project_id = ${projectId}`;
  return row ?? null;
}

/**
 * Replaces an alert's fields. A changed question or condition (measure, event, filters,
 * interval, condition) starts the alert over: state `unknown`, no last value, nothing checked, so
 * its next check tells the channels whether the new condition holds. Name, channels and `enabled`
 * keep the state.
 */
export async function updateAlert(sql: Sql, projectId: string, id: string, input: AlertInput): Promise<AlertRow | null> {
  return sql.begin(async (tx) => {
    const [current] = await tx<
      AlertRow[]
    >`select ${alertColumns(tx)} from alerts a where a.id = ${id} and a.project_id = ${projectId} for update`;
    if (!current) return null;
    const questionChanged =
      current.measure !== input.measure ||
      current.event !== input.event ||
      JSON.stringify(current.filters) !== JSON.stringify(input.filters) ||
      current.interval_unit !== input.interval ||
      current.condition_type !== input.condition.type ||
      current.condition_value !== conditionValue(input.condition);
    await tx`
      update alerts set
        name = ${input.name}, measure = ${input.measure}, event = ${input.event}, filters = ${tx.json(input.filters as never)},
        interval_unit = ${input.interval}, condition_type = ${input.condition.type}, condition_value = ${conditionValue(input.condition)},
        email = ${input.email}, enabled = ${input.enabled}, updated_at = now()
        ${questionChanged ? tx`, state = 'unknown', last_value = null, last_checked_at = null, checked_through = null` : tx``}
      where id = ${id}`;
    await linkIntegrations(tx, id, input.integrationIds);
    return findAlert(tx, projectId, id);
  });
}

/** Deletes an alert with its checks and links; answers it as it was, or null when it is not the project's. */
export async function deleteAlert(sql: Sql, projectId: string, id: string): Promise<AlertRow | null> {
  return sql.begin(async (tx) => {
    const row = await findAlert(tx, projectId, id);
    if (row) await tx`delete from alerts where id = ${id}`;
    return row;
  });
}

/** The alert's checks, newest interval first (at most KEPT_CHECKS are kept). */
export async function listChecks(sql: SqlLike, alertId: string, limit = KEPT_CHECKS): Promise<AlertCheckRow[]> {
  return sql<AlertCheckRow[]>`
    select id, alert_id, interval_start, interval_end, value, previous_value, change_percent, state, notified, skipped, checked_at
    from alert_checks
    where alert_id = ${alertId}
    order by interval_start desc
    limit ${limit}`;
}

/** An alert the evaluator may check: enabled, of a project that is not suspended, with the plan it is checked on. */
export type DueAlert = AlertRow & { plan: Plan; session_timeout_minutes: number };

/**
 * The enabled alerts of projects that are not suspended whose latest completed interval (per
 * interval unit, given by the caller's clock) is later than what they checked through: the
 * evaluator's work. Ids only are trusted from here; the check itself locks and re-reads the row.
 */
export async function dueAlertIds(
  sql: SqlLike,
  latest: Record<AlertInterval, Date>,
  plans: readonly Plan[],
  limit: number,
): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select a.id from alerts a
    join projects p on p.id = a.project_id
    join accounts acc on acc.id = p.account_id
    where a.enabled and not p.suspended and acc.plan in ${sql(plans as string[])}
      and (a.checked_through is null or a.checked_through < case a.interval_unit
        when 'hour' then ${latest.hour}::timestamptz
        when 'day' then ${latest.day}::timestamptz
        else ${latest.week}::timestamptz end)
    order by a.checked_through nulls first, a.id
    limit ${limit}`;
  return rows.map((row) => row.id);
}

/**
 * Locks one alert for its check (`for update skip locked`: another worker checking it makes this
 * null), with its project's plan and session timeout. Call it inside the transaction that records
 * the check.
 */
export async function lockAlertForCheck(sql: SqlLike, id: string): Promise<DueAlert | null> {
  const [row] = await sql<DueAlert[]>`
    select ${alertColumns(sql)}, acc.plan, p.session_timeout_minutes
    from alerts a
    join projects p on p.id = a.project_id
    join accounts acc on acc.id = p.account_id
    where a.id = ${id} and a.enabled and not p.suspended
    for update of a skip locked`;
  return row ?? null;
}

/** One check's outcome, as the evaluator computed it. */
export type CheckRecord = {
  intervalStart: Date;
  intervalEnd: Date;
  value: number | null;
  previousValue: number | null;
  changePercent: number | null;
  state: 'ok' | 'firing';
  notified: AlertChange | null;
  skipped: number;
  checkedAt: Date;
};

/**
 * Records a check of a locked alert (lockAlertForCheck, same transaction): the check row, the
 * alert's new state, last value and checked_through, and the prune to the last KEPT_CHECKS checks.
 * False when the interval was already checked (the unique key): nothing is written then.
 */
export async function recordCheck(sql: SqlLike, alertId: string, check: CheckRecord): Promise<AlertCheckRow | null> {
  const [row] = await sql<AlertCheckRow[]>`
    insert into alert_checks (alert_id, interval_start, interval_end, value, previous_value, change_percent, state, notified, skipped, checked_at)
    values (${alertId}, ${check.intervalStart}, ${check.intervalEnd}, ${check.value}, ${check.previousValue}, ${check.changePercent},
            ${check.state}, ${check.notified}, ${check.skipped}, ${check.checkedAt})
    on conflict (alert_id, interval_start) do nothing
    returning id, alert_id, interval_start, interval_end, value, previous_value, change_percent, state, notified, skipped, checked_at`;
  if (!row) return null;
  await sql`
    update alerts set state = ${check.state}, last_value = ${check.value}, last_checked_at = ${check.checkedAt},
      checked_through = ${check.intervalStart}
    where id = ${alertId}`;
  await sql`
    delete from alert_checks
    where alert_id = ${alertId}
      and id not in (select id from alert_checks where alert_id = ${alertId} order by interval_start desc limit ${KEPT_CHECKS})`;
  return row;
}
