import { z } from 'zod';
import {
  type AlertCondition,
  type AlertInterval,
  type AlertState,
  intervalOf,
  judge,
  lastCompletedInterval,
  nextState,
} from '../../core/alerts.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import { apiTime } from '../../core/time.js';
import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { firstInvalidRegex } from '../../olap/filter-sql.js';
import type { FilterList } from '../../olap/filter-types.js';
import { type AlertQuestion, alertSeries, alertValue } from '../../olap/metrics/alert-value.js';
import type { Measure } from '../../olap/metrics/measures.js';
import { MetricsError } from '../../olap/metrics/metrics.errors.js';
import type { MetricsTarget } from '../../olap/metrics/metrics.planner.js';
import { alertNotice, enqueueAlertNotification } from '../../oltp/alert-notifications.js';
import {
  type AlertInput,
  type AlertRow,
  conditionOf,
  createAlert,
  deleteAlert,
  findAlert,
  foreignIntegrationIds,
  KEPT_CHECKS,
  listAlerts,
  listChecks,
  updateAlert,
} from '../../oltp/alerts.repo.js';
import type { Sql } from '../../oltp/db.js';
import { findDelivery } from '../../oltp/deliveries.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { enqueueDeliveries } from '../../workers/notify/deliveries.queue.js';
import { defineRoute } from '../define-route.js';
import { AppError, badRequest, notFound, paymentRequired } from '../errors.js';
import { body, defaultError, error, json, ProjectPath } from '../shared/building-blocks.js';
import { presentDelivery } from '../shared/deliveries.presenter.js';
import { presentAlert, presentCheck } from './alerts.presenter.js';
import { AlertCheckResponse, AlertPreviewResponse, AlertResponse, AlertTestResponse } from './alerts.responses.js';
import { AlertPreviewBody, CreateAlertBody, ProjectAlertPath, UpdateAlertBody } from './alerts.schema.js';

/** How many completed intervals the "would have fired" preview goes back. */
export const PREVIEW_INTERVALS = 30;

const ALERTS_PLAN = 'alerts require the Pro or Team plan';
const notAlert = error('No such project, or no such alert in it.');
const badAlert = error(
  'Validation failed (the reason names the field): an unknown measure, a bad filter (the metrics API’s words), an unknown integration id, a bad condition.',
);

const targetOf = (project: ProjectWithPlan): MetricsTarget => ({
  projectId: project.id,
  plan: project.plan,
  surface: 'admin',
  sessionTimeoutMinutes: project.session_timeout_minutes,
});

/** The metrics planner's refusals (a custom event below Pro, a window out of range) in the server-wide body. */
async function asAppError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (caught) {
    if (caught instanceof MetricsError) throw new AppError(caught.status, caught.message);
    throw caught;
  }
}

/**
 * What must hold before an alert is written: its integrations are the project's (an unknown id is
 * a 400, another project's a 404, as elsewhere) and its filters' patterns compile. Nothing is
 * written before these pass.
 */
async function checkAlertInput(sql: Sql, clickhouse: ClickHouseClient, projectId: string, input: AlertInput): Promise<void> {
  const { unknown, others, trackers } = await foreignIntegrationIds(sql, projectId, input.integrationIds);
  if (unknown.length > 0) throw badRequest(`channels.integrations: unknown integration ${unknown[0]}`);
  if (others.length > 0) throw notFound('integration not found');
  if (trackers.length > 0) throw badRequest(`channels.integrations: ${trackers[0]} is an issue tracker, which takes no messages`);
  const invalid = await firstInvalidRegex(clickhouse, input.filters as FilterList);
  if (invalid) throw badRequest(`${invalid.path}: ${invalid.reason}`);
}

const questionOf = (input: { measure: string; event: string | null; filters: unknown[]; interval: AlertInterval }): AlertQuestion => ({
  measure: input.measure as Measure,
  event: input.event ?? undefined,
  filters: input.filters as FilterList,
  interval: input.interval,
});

/** The "would have fired" preview: the last PREVIEW_INTERVALS completed intervals, judged in order from `unknown`. */
async function preview(
  clickhouse: ClickHouseClient,
  project: ProjectWithPlan,
  question: AlertQuestion,
  condition: AlertCondition,
  now: Date,
) {
  const last = lastCompletedInterval(now, question.interval);
  const series = await alertSeries(clickhouse, targetOf(project), question, last, PREVIEW_INTERVALS + 1);
  let state: AlertState = 'unknown';
  let fired = 0;
  const intervals = series.intervals.slice(1).map((interval, i) => {
    const before = series.intervals[i];
    if (!interval.covered) {
      return {
        interval_start: apiTime(interval.start),
        interval_end: apiTime(interval.end),
        covered: false,
        value: null,
        previous_value: null,
        change_percent: null,
        condition_met: null,
        state,
        notified: null,
      };
    }
    const previous = before?.covered ? before.value : null;
    const judgement = judge(condition, interval.value, previous);
    const next = nextState(state, judgement.holds);
    state = next.state;
    if (next.change === 'firing') fired += 1;
    return {
      interval_start: apiTime(interval.start),
      interval_end: apiTime(interval.end),
      covered: true,
      value: interval.value,
      previous_value: previous,
      change_percent: judgement.changePercent,
      condition_met: judgement.holds,
      state,
      notified: next.change,
    };
  });
  return {
    intervals,
    fired,
    event_scope: series.event_scope,
    retention_clamped: series.retention_clamped,
    retention_window_days: series.retention_window_days,
  };
}

const inputOf = (body: CreateAlertBody): AlertInput => ({
  name: body.name,
  measure: body.measure,
  event: body.event,
  filters: body.filters,
  interval: body.interval,
  condition: body.condition,
  integrationIds: body.channels.integrations,
  email: body.channels.email,
  enabled: body.enabled,
});

/** An update's fields over the alert's current ones. */
const mergedInput = (current: AlertRow, body: UpdateAlertBody): AlertInput => ({
  name: body.name ?? current.name,
  measure: body.measure ?? current.measure,
  event: body.event === undefined ? current.event : body.event,
  filters: body.filters ?? current.filters,
  interval: body.interval ?? current.interval_unit,
  condition: body.condition ?? conditionOf(current),
  integrationIds: body.channels?.integrations ?? current.integration_ids,
  email: body.channels?.email ?? current.email,
  enabled: body.enabled ?? current.enabled,
});

const alertFields = {
  name: '1 to 200 characters.',
  measure:
    'A measure of the admin metrics surface (docs/metrics.md "Measures"): `event_count`, `unique_event_users`, the feedback, SDK-user and revenue measures, `dau`/`wau`/`mau`, `events_per_user`, the session measures, or property math `<math>:<property>`. An unknown one is a 400.',
  event: 'The metrics API’s `event`: only this event’s measures. Null or absent: all events.',
  filters: 'The metrics API’s filter list (docs/metrics.md, "Filters"); a bad one is a 400 naming it.',
  interval: '`hour`, `day` or `week` (UTC; weeks start on Monday): the alert is checked after each one ends.',
  condition: '`{ "type": "above" | "below", "value": N }` or `{ "type": "increase" | "decrease", "percent": N }` (N > 0).',
  channels:
    '`integrations`: ids of the project’s integrations (an unknown id or an issue tracker’s is a 400, another project’s a 404); `email`: to the owner and, on Team, the members. Default: none.',
  enabled: 'Default true. A disabled alert is not checked.',
};

/**
 * Alerts on metrics (docs/notifications.md "Alerts"): CRUD, the checks, "Send test" and the
 * "would have fired" preview. Pro (5 per project) and Team (50); none on Free. After a downgrade
 * to Free the alerts are kept, listed and removable, and not checked.
 */
export const alertRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/alerts',
    auth: 'projectAdmin',
    operationId: 'createAlert',
    tags: ['Alerts'],
    summary: 'Create an alert on a metrics question',
    description: `Pro (${PLAN_LIMITS.pro.maxAlertsPerProject} alerts per project) and Team (${PLAN_LIMITS.team.maxAlertsPerProject}); a 402 on Free or past the limit. The alert starts \`unknown\` and is checked after its next interval ends. Nothing is saved when anything is refused.`,
    params: ProjectPath,
    body: body(
      CreateAlertBody,
      'CreateAlertRequest',
      Object.entries(alertFields)
        .map(([k, v]) => `\`${k}\`: ${v}`)
        .join(' '),
    ),
    responses: {
      200: json('The alert.', AlertResponse),
      400: badAlert,
      402: error('The plan has no alerts (Free), or the project has as many as the plan allows.'),
      404: error('No such project, or an integration of another project.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, clickhouse }, { project, body }) => {
      const limit = PLAN_LIMITS[project.plan].maxAlertsPerProject;
      if (limit === 0) throw paymentRequired(ALERTS_PLAN);
      const input = inputOf(body);
      await checkAlertInput(sql, clickhouse, project.id, input);
      const result = await createAlert(sql, project.id, input, limit);
      if (result.kind === 'limit') throw paymentRequired(`the ${project.plan} plan allows ${result.limit} alerts per project`);
      ctx.body = presentAlert(result.alert);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/alerts',
    auth: 'projectAdmin',
    operationId: 'listAlerts',
    tags: ['Alerts'],
    summary: 'List a project’s alerts',
    description: 'Oldest first, with each one’s state and last value. Answers on every plan (alerts are kept after a downgrade).',
    params: ProjectPath,
    responses: { 200: json('The alerts.', z.array(AlertResponse)), default: defaultError },
    handler: async (ctx, { sql }, { project }) => {
      ctx.body = (await listAlerts(sql, project.id)).map(presentAlert);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/alerts/preview',
    auth: 'projectAdmin',
    operationId: 'previewAlert',
    tags: ['Alerts'],
    summary: 'What an alert would have done over the last 30 intervals',
    description: `Judges the question and condition (saved or not) over the last ${PREVIEW_INTERVALS} completed intervals, oldest first, starting from \`unknown\`: each interval’s value, whether the condition held and what a check would have told the channels. One metrics timeseries request: intervals the plan’s window does not reach have no value (\`covered: false\`).`,
    params: ProjectPath,
    body: body(AlertPreviewBody, 'AlertPreviewRequest', 'The fields of an alert’s question and condition, as for creating one.'),
    responses: {
      200: json('The preview.', AlertPreviewResponse),
      400: badAlert,
      default: defaultError,
    },
    handler: async (ctx, { clickhouse }, { project, body }) => {
      const invalid = await firstInvalidRegex(clickhouse, body.filters);
      if (invalid) throw badRequest(`${invalid.path}: ${invalid.reason}`);
      ctx.body = await asAppError(() => preview(clickhouse, project, questionOf(body), body.condition, new Date()));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/alerts/:alertId',
    auth: 'projectAdmin',
    operationId: 'getAlert',
    tags: ['Alerts'],
    summary: 'Get one alert',
    params: ProjectAlertPath,
    responses: { 200: json('The alert.', AlertResponse), 404: notAlert, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const alert = await findAlert(sql, project.id, params.alertId);
      if (!alert) throw notFound('alert not found');
      ctx.body = presentAlert(alert);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/projects/:id/alerts/:alertId',
    auth: 'projectAdmin',
    operationId: 'updateAlert',
    tags: ['Alerts'],
    summary: 'Change an alert',
    description:
      'The fields sent replace the alert’s; the others are kept. A changed question or condition (measure, event, filters, interval, condition) starts the alert over: `unknown`, until its next check. Pro and Team.',
    params: ProjectAlertPath,
    body: body(UpdateAlertBody, 'UpdateAlertRequest', 'Any of the fields of an alert, at least one.'),
    responses: {
      200: json('The alert.', AlertResponse),
      400: badAlert,
      402: error('The plan has no alerts (Free).'),
      404: error('No such project or alert, or an integration of another project.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, clickhouse }, { project, params, body }) => {
      if (PLAN_LIMITS[project.plan].maxAlertsPerProject === 0) throw paymentRequired(ALERTS_PLAN);
      const current = await findAlert(sql, project.id, params.alertId);
      if (!current) throw notFound('alert not found');
      const input = mergedInput(current, body);
      await checkAlertInput(sql, clickhouse, project.id, input);
      const updated = await updateAlert(sql, project.id, params.alertId, input);
      if (!updated) throw notFound('alert not found');
      ctx.body = presentAlert(updated);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/alerts/:alertId',
    auth: 'projectAdmin',
    operationId: 'deleteAlert',
    tags: ['Alerts'],
    summary: 'Delete an alert and its checks',
    description: 'Allowed on every plan.',
    params: ProjectAlertPath,
    responses: { 200: json('The removed alert.', AlertResponse), 404: notAlert, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const alert = await deleteAlert(sql, project.id, params.alertId);
      if (!alert) throw notFound('alert not found');
      ctx.body = presentAlert(alert);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/alerts/:alertId/checks',
    auth: 'projectAdmin',
    operationId: 'listAlertChecks',
    tags: ['Alerts'],
    summary: 'The last 100 checks of an alert',
    description: `Newest interval first; the last ${KEPT_CHECKS} are kept. Each says the interval, its value, the state after it, the change it told the channels and how many intervals before it were skipped.`,
    params: ProjectAlertPath,
    responses: { 200: json('The checks.', z.array(AlertCheckResponse)), 404: notAlert, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const alert = await findAlert(sql, project.id, params.alertId);
      if (!alert) throw notFound('alert not found');
      ctx.body = (await listChecks(sql, alert.id)).map(presentCheck);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/alerts/:alertId/test',
    auth: 'projectAdmin',
    operationId: 'sendAlertTest',
    tags: ['Alerts'],
    summary: 'Send test: evaluate an alert now and send one test message to its channels',
    description:
      'Evaluates the alert over the interval so far (from the start of the interval that holds now, until now) against the interval before, answers the value, and sends one message marked as a test to each of its channels through the ordinary deliveries. Changes no state and records no check. Pro and Team.',
    params: ProjectAlertPath,
    responses: {
      200: json('The value now and the test message’s deliveries.', AlertTestResponse),
      402: error('The plan has no alerts (Free).'),
      404: notAlert,
      default: defaultError,
    },
    handler: async (ctx, { sql, clickhouse, deliveryQueue, config, logger }, { project, params }) => {
      if (PLAN_LIMITS[project.plan].maxAlertsPerProject === 0) throw paymentRequired(ALERTS_PLAN);
      const alert = await findAlert(sql, project.id, params.alertId);
      if (!alert) throw notFound('alert not found');
      const now = new Date();
      const span = intervalOf(now, alert.interval_unit);
      const { value, previous } = await asAppError(() =>
        alertValue(clickhouse, targetOf(project), questionOf({ ...alert, interval: alert.interval_unit }), span, now),
      );
      const judgement = judge(conditionOf(alert), value, previous);
      const notice = alertNotice(alert, 'test', {
        intervalStart: span.start,
        intervalEnd: span.end,
        value,
        previousValue: previous,
        changePercent: judgement.changePercent,
        conditionMet: judgement.holds,
      });
      const deliveryIds = await sql.begin((tx) => enqueueAlertNotification(tx, project.id, notice));
      if (deliveryQueue && deliveryIds.length > 0) {
        try {
          await enqueueDeliveries(deliveryQueue, deliveryIds, config.delivery.maxAttempts);
        } catch (error) {
          logger.warn({ err: error }, 'alert test deliveries not queued (Redis unavailable?); the overdue sweep will queue them');
        }
      }
      const deliveries = await Promise.all(deliveryIds.map((id) => findDelivery(sql, project.id, id)));
      ctx.body = {
        interval_start: apiTime(span.start),
        measured_until: apiTime(now),
        value,
        previous_value: previous,
        change_percent: judgement.changePercent,
        condition_met: judgement.holds,
        state: alert.state,
        deliveries: deliveries.flatMap((delivery) => (delivery ? [presentDelivery(delivery)] : [])),
      };
    },
  }),
];
