import type { AlertMessage } from '../core/alert-message.js';
import type { Plan } from '../core/plans.js';
import { apiTime } from '../core/time.js';
import type { AlertRow } from './alerts.repo.js';
import { conditionOf } from './alerts.repo.js';
import type { SqlLike } from './db.js';
import { alertRecipients, recordNotification } from './notifications.repo.js';

/**
 * What an alert's message says (docs/notifications.md "Alerts"), frozen when the state changed:
 * the alert, the interval, its value, the interval before, the threshold and the dashboard path.
 */
export type AlertNotice = AlertMessage;

/** The notice of one check of `alert`. */
export function alertNotice(
  alert: AlertRow,
  change: AlertNotice['change'],
  check: {
    intervalStart: Date;
    intervalEnd: Date;
    value: number | null;
    previousValue: number | null;
    changePercent: number | null;
    conditionMet: boolean;
  },
): AlertNotice {
  return {
    alert: {
      id: alert.id,
      name: alert.name,
      measure: alert.measure,
      event: alert.event,
      filters: alert.filters,
      interval: alert.interval_unit,
      condition: conditionOf(alert),
    },
    change,
    interval_start: apiTime(check.intervalStart),
    interval_end: apiTime(check.intervalEnd),
    value: check.value,
    previous_value: check.previousValue,
    change_percent: check.changePercent,
    condition_met: check.conditionMet,
    dashboard_path: `/projects/${alert.project_id}/alerts`,
  };
}

/**
 * Hands an alert's change of state (or its test message) to the notifications, inside the
 * transaction that records the check, so the message exists exactly when the check committed (the
 * outbox rule, docs/notifications.md "How a notification is sent"): an `alert.firing` or
 * `alert.resolved` notification the dispatcher expands to the alert's channels. A test
 * (`alert.test`) is written already dispatched with its deliveries, as an integration's test is, so
 * that "Send test" answers them; answers their ids (none for a change: the dispatcher makes those).
 */
export async function enqueueAlertNotification(sql: SqlLike, projectId: string, notice: AlertNotice): Promise<string[]> {
  if (notice.change !== 'test') {
    await recordNotification(sql, {
      projectId,
      type: notice.change === 'firing' ? 'alert.firing' : 'alert.resolved',
      payload: { alert_message: notice },
    });
    return [];
  }
  const [project] = await sql<{ plan: Plan }[]>`
    select a.plan from projects p join accounts a on a.id = p.account_id where p.id = ${projectId}`;
  if (!project) return [];
  const recipients = await alertRecipients(sql, projectId, notice.alert.id, project.plan);
  if (recipients.length === 0) return [];
  const [notification] = await sql<{ id: string }[]>`
    insert into notifications (project_id, type, payload, dispatched_at)
    values (${projectId}, 'alert.test', ${sql.json(JSON.parse(JSON.stringify({ alert_message: notice })))}, now())
    returning id`;
  const ids: string[] = [];
  for (const r of recipients) {
    const [row] = await sql<{ id: string }[]>`
      insert into deliveries (notification_id, project_id, channel, recipient, integration_id, unsubscribe_token)
      values (${notification?.id ?? null}, ${projectId}, ${r.channel}, ${r.recipient}, ${r.integration_id}, ${r.unsubscribe_token})
      on conflict (notification_id, channel, recipient) do nothing
      returning id`;
    if (row) ids.push(row.id);
  }
  return ids;
}
