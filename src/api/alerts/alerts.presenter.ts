import { apiTime, apiTimeOrNull } from '../../core/time.js';
import { type AlertCheckRow, type AlertRow, conditionOf } from '../../oltp/alerts.repo.js';

/** An alert as the API answers it (docs/notifications.md "Alerts"). */
export function presentAlert(row: AlertRow) {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    measure: row.measure,
    event: row.event,
    // Stored as the request's validated list (FilterListField), so it has the documented shape.
    filters: row.filters as Record<string, unknown>[],
    interval: row.interval_unit,
    condition: conditionOf(row),
    channels: { integrations: row.integration_ids, email: row.email },
    enabled: row.enabled,
    state: row.state,
    last_value: row.last_value,
    last_checked_at: apiTimeOrNull(row.last_checked_at),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}

/** One check of an alert. */
export function presentCheck(row: AlertCheckRow) {
  return {
    interval_start: apiTime(row.interval_start),
    interval_end: apiTime(row.interval_end),
    value: row.value,
    previous_value: row.previous_value,
    change_percent: row.change_percent,
    state: row.state,
    notified: row.notified,
    skipped: row.skipped,
    checked_at: apiTime(row.checked_at),
  };
}
