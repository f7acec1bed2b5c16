import { z } from 'zod';
import { ALERT_INTERVALS, ALERT_STATES } from '../../core/alerts.js';
import { anyValues } from '../shared/any-values.js';
import { DeliveryResponse } from '../shared/deliveries.responses.js';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentAlert, presentCheck } from './alerts.presenter.js';

// Alerts on metrics (docs/notifications.md "Alerts")

const value = z
  .number()
  .nullable()
  .meta({ description: 'The measure’s value; null when it has none (a ratio without users, math over no value).' });

export const AlertConditionResponse = z
  .union([
    z.object({ type: z.enum(['above', 'below']), value: z.number() }),
    z.object({ type: z.enum(['increase', 'decrease']), percent: z.number() }),
  ])
  .meta({
    id: 'AlertCondition',
    description:
      '`above` holds when the value is greater than `value`, `below` when it is less (equal meets neither); `increase` / `decrease` when the value rose / fell by at least `percent` % against the interval before (met exactly: holds). After an interval of 0, `increase` holds for any value above 0 and `decrease` never.',
  });

export const AlertResponse = z
  .object({
    id: uuid,
    project_id: uuid,
    name: z.string(),
    measure: z
      .string()
      .meta({ description: 'A measure of the admin metrics surface, as `measures` of GET /projects/{id}/metrics/timeseries takes it.' }),
    event: z.string().nullable().meta({ description: 'The metrics API’s `event`: only this event’s measures (null: all).' }),
    filters: z.array(z.record(z.string(), z.unknown()).meta(anyValues)).meta({
      description:
        'The metrics API’s `filters`, as given (docs/metrics.md, "Filters"): `{ property, op, value }` or `{ any: [...] }` each.',
    }),
    interval: z.enum(ALERT_INTERVALS).meta({ description: 'Checked after each UTC hour, day or week (weeks start on Monday) ends.' }),
    condition: AlertConditionResponse,
    channels: z.object({
      integrations: z.array(uuid).meta({ description: 'Integrations of the project that get its messages.' }),
      email: z.boolean().meta({ description: 'Email to the account owner and, on Team, the project’s members.' }),
    }),
    enabled: z.boolean(),
    state: z.enum(ALERT_STATES).meta({ description: '`unknown` until the first check; then `ok` or `firing`.' }),
    last_value: value,
    last_checked_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Alert', description: 'An alert on one metrics question.' });

export const AlertCheckResponse = z
  .object({
    interval_start: timestamp,
    interval_end: timestamp,
    value,
    previous_value: value.meta({ description: 'The interval before’s value (what increase and decrease compare with).' }),
    change_percent: z.number().nullable().meta({ description: 'increase/decrease: the change in percent; null without a percentage.' }),
    state: z.enum(['ok', 'firing']),
    notified: z.enum(['firing', 'resolved']).nullable().meta({ description: 'The change of state this check told the channels, if any.' }),
    skipped: count.meta({ description: 'Completed intervals before this one that were never checked (the workers were stopped).' }),
    checked_at: timestamp,
  })
  .meta({ id: 'AlertCheck', description: 'One check of an alert: one completed interval.' });

export const AlertTestResponse = z
  .object({
    interval_start: timestamp.meta({ description: 'Start of the interval that holds now.' }),
    measured_until: timestamp.meta({ description: 'Now: the interval so far is measured.' }),
    value,
    previous_value: value,
    change_percent: z.number().nullable(),
    condition_met: z.boolean().meta({ description: 'Whether the condition holds for the interval so far.' }),
    state: z.enum(ALERT_STATES).meta({ description: 'The alert’s state, unchanged by the test.' }),
    deliveries: z.array(DeliveryResponse).meta({ description: 'The test message’s deliveries, pending; one per channel.' }),
  })
  .meta({ id: 'AlertTest', description: 'The alert evaluated now, and its test message.' });

export const AlertPreviewResponse = z
  .object({
    intervals: z.array(
      z.object({
        interval_start: timestamp,
        interval_end: timestamp,
        covered: z.boolean().meta({ description: 'false: the plan’s window does not reach this interval; it has no value.' }),
        value,
        previous_value: value,
        change_percent: z.number().nullable(),
        condition_met: z.boolean().nullable().meta({ description: 'null for an interval the window does not cover.' }),
        state: z.enum(ALERT_STATES),
        notified: z
          .enum(['firing', 'resolved'])
          .nullable()
          .meta({ description: 'What a check of this interval would have told the channels.' }),
      }),
    ),
    fired: count.meta({ description: 'How many times the alert would have started firing over these intervals.' }),
    event_scope: z.enum(['all', 'predefined_only']),
    retention_clamped: z.boolean(),
    retention_window_days: z.number().int(),
  })
  .meta({ id: 'AlertPreview', description: 'What an alert would have done over the last 30 completed intervals, oldest first.' });

export type AlertResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentAlert>, Out<typeof AlertResponse>>>,
  Expect<SameShape<ReturnType<typeof presentCheck>, Out<typeof AlertCheckResponse>>>,
];
