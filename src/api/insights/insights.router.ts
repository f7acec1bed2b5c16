import { Router } from '@koa/router';
import { findImpactLink, saveImpactLink } from '../../oltp/insights.repo.js';
import { listVoters } from '../../oltp/votes.repo.js';
import { adminAuth, ownedProject } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { notFound } from '../errors.js';
import { MetricsError } from '../metrics/metrics.errors.js';
import type { AppState, RequestContext } from '../state.js';
import { isUuid, readQuery } from '../validation.js';
import { impactAnswer } from './impact.service.js';
import { FunnelBody, ImpactLinkBody, parseInsightBody, RetentionBody } from './insights.schema.js';
import { eventNamesAnswer, funnelAnswer, retentionAnswer } from './insights.service.js';

/** Query parameters in the metrics API's way (either casing, each at most once), refused in its body. */
const insightsQuery = (ctx: RequestContext, names: readonly string[]) =>
  readQuery(ctx.query, names, (name, problem) => new MetricsError('METRICS_INVALID_PARAMETER', `${name} ${problem}`));

/** A whole number from `min` to `max` in a query parameter, or the fallback when absent. */
function intParameter(name: string, value: string | undefined, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new MetricsError('METRICS_INVALID_PARAMETER', `${name} must be an integer from ${min} to ${max}`);
  }
  return n;
}

/**
 * Insights on a project's events (issue 24, docs/insights.md): funnels, retention cohorts, the
 * names for pickers and feature impact. Admin token of the owning account, or a member's on Team
 * (adminAuth). The plan's rules are the metrics API's: a clamped window is a 200 that says so, and
 * naming a custom event below Pro is a 402.
 */
export function insightsRouter({ sql, clickhouse }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const auth = adminAuth(sql);

  router.post('/projects/:id/insights/funnel', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const body = parseInsightBody(FunnelBody, ctx.request.body);
    ctx.body = await funnelAnswer(clickhouse, { projectId: project.id, plan: project.plan }, body);
  });

  router.post('/projects/:id/insights/retention', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const body = parseInsightBody(RetentionBody, ctx.request.body);
    ctx.body = await retentionAnswer(clickhouse, { projectId: project.id, plan: project.plan }, body);
  });

  router.get('/projects/:id/event-names', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const query = insightsQuery(ctx, ['date_from', 'date_to', 'limit']);
    const limit = intParameter('limit', query.limit, 1, 1000, 100);
    ctx.body = await eventNamesAnswer(clickhouse, { projectId: project.id, plan: project.plan }, { ...query, limit });
  });

  router.put('/projects/:id/feedbacks/:feedbackId/impact', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const feedbackId = ctx.params.feedbackId ?? '';
    const voters = isUuid(feedbackId) ? await listVoters(sql, project.id, feedbackId) : null;
    if (!voters) throw notFound('feedback not found');
    const body = parseInsightBody(ImpactLinkBody, ctx.request.body);
    await saveImpactLink(sql, project.id, feedbackId, body.eventNames);
    ctx.body = { feedback_id: feedbackId, event_names: body.eventNames };
  });

  router.get('/projects/:id/feedbacks/:feedbackId/impact', auth, async (ctx) => {
    const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
    const feedbackId = ctx.params.feedbackId ?? '';
    const voters = isUuid(feedbackId) ? await listVoters(sql, project.id, feedbackId) : null;
    if (!voters) throw notFound('feedback not found');
    const days = intParameter('days', insightsQuery(ctx, ['days']).days, 1, 365, 30);
    const eventNames = await findImpactLink(sql, project.id, feedbackId);
    if (!eventNames) throw notFound('no events are linked to this feedback item: PUT its impact first');
    ctx.body = await impactAnswer(
      clickhouse,
      { projectId: project.id, plan: project.plan },
      { feedbackId, eventNames, days, voters: voters.voters },
    );
  });
  return router;
}
