import type { ClickHouseClient } from '../../olap/clickhouse.js';
import { impactCounts, impactSeries, shippedAt } from '../../olap/insights/impact.queries.js';
import { shipDates } from '../../olap/insights/ship-dates.queries.js';
import { clickhouseTimeToIso } from '../../olap/time.js';
import type { VoterRow } from '../../oltp/votes.repo.js';
import { type InsightsTarget, prepare } from './insights.service.js';

const DAY_MS = 86_400_000;

/** Sums of floating MRR figures, rounded to a millionth as the metrics API does. */
const roundMoney = (value: number) => Math.round(value * 1e6) / 1e6;
/** RFC 3339 in whole seconds, as every timestamp the API answers (DESIGN 3). */
const wholeSeconds = (iso: string) => `${iso.slice(0, 19)}Z`;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * GET /projects/:id/feedbacks/:feedbackId/impact (docs/insights.md, "Feature impact"): the linked
 * events `days` days before and after the item shipped, its voters who used them after, and a
 * daily series. The span [shipped − days, shipped + days) is the request's window, clamped by the
 * plan like any other (its days are date_from and date_to); before shipping, or with no event
 * linked, only the voters are told.
 */
export async function impactAnswer(
  client: ClickHouseClient,
  target: InsightsTarget,
  input: { feedbackId: string; eventNames: string[]; days: number; voters: VoterRow[] },
) {
  const shipped = await shippedAt(client, target.projectId, input.feedbackId);
  const base = { feedback_id: input.feedbackId, event_names: input.eventNames, days: input.days, voters: input.voters.length };
  // Not shipped yet, or nothing linked yet (a normal state of every new item, so a 200 and not a
  // 404 a page would log as an error): only the voters are told.
  if (shipped === null || input.eventNames.length === 0) {
    const p = prepare(target, {}, input.eventNames);
    return {
      ...p.echo,
      ...base,
      shipped_at: shipped === null ? null : wholeSeconds(clickhouseTimeToIso(shipped)),
      before: null,
      after: null,
      voters_adopted: null,
      voters_adopted_mrr: null,
      adoption_share: null,
      series: [],
    };
  }
  const shippedMs = Date.parse(clickhouseTimeToIso(shipped));
  const spanStart = shippedMs - input.days * DAY_MS;
  const spanEnd = shippedMs + input.days * DAY_MS;
  // The days the span touches, as a metrics window: the plan clamps it (keeping its last day).
  const p = prepare(target, { dateFrom: isoDay(spanStart), dateTo: isoDay(spanEnd - 1) }, input.eventNames);
  const scope = {
    ...p.scope,
    start: new Date(Math.max(spanStart, p.window.start.getTime())),
    end: new Date(Math.min(spanEnd, p.window.end.getTime())),
  };
  const [counts, days] = await Promise.all([
    impactCounts(client, scope, { shipped, eventNames: input.eventNames, voters: input.voters.map((v) => v.user_id) }),
    impactSeries(client, scope, input.eventNames),
  ]);
  const adopted = new Set(counts.voters_adopted);
  const byDay = new Map(days.map((d) => [d.date, d]));
  const series: { date: string; users: number; events: number }[] = [];
  for (let day = Date.parse(`${p.window.dateFrom}T00:00:00Z`); day < p.window.end.getTime(); day += DAY_MS) {
    const date = isoDay(day);
    series.push({ date, users: byDay.get(date)?.users ?? 0, events: byDay.get(date)?.events ?? 0 });
  }
  return {
    ...p.echo,
    ...base,
    shipped_at: wholeSeconds(clickhouseTimeToIso(shipped)),
    before: counts.before,
    after: counts.after,
    voters_adopted: adopted.size,
    voters_adopted_mrr: roundMoney(input.voters.filter((v) => adopted.has(v.user_id)).reduce((sum, v) => sum + Number(v.mrr ?? 0), 0)),
    adoption_share: counts.after.active_users === 0 ? null : counts.after.users / counts.after.active_users,
    series,
  };
}

/**
 * GET /projects/:id/insights/ship-dates: the items completed in the window (their latest status
 * is `completed`, last reached in it), with their titles, for marking ship dates on charts. The
 * plan clamps the window as it does every metrics window.
 */
export async function shipDatesAnswer(
  client: ClickHouseClient,
  target: InsightsTarget,
  query: { date_from?: string | undefined; date_to?: string | undefined },
  titles: (ids: string[]) => Promise<Map<string, string>>,
) {
  const p = prepare(target, { dateFrom: query.date_from, dateTo: query.date_to }, []);
  const rows = await shipDates(client, target.projectId, p.window.start, p.window.end);
  const named = await titles(rows.map((row) => row.feedback_id));
  return {
    ...p.echo,
    items: rows.flatMap((row) => {
      const title = named.get(row.feedback_id);
      // A deleted item has no page to link to: it is left out.
      return title === undefined
        ? []
        : [{ feedback_id: row.feedback_id, title, shipped_at: wholeSeconds(clickhouseTimeToIso(row.shipped)) }];
    }),
  };
}
