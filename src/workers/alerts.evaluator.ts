import { ALERT_INTERVALS, type AlertInterval, INTERVAL_MS, judge, lastCompletedInterval, nextState } from '../core/alerts.js';
import type { Logger } from '../core/logger.js';
import { PLAN_LIMITS, PLANS } from '../core/plans.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import type { FilterList } from '../olap/filter-types.js';
import { alertValue } from '../olap/metrics/alert-value.js';
import type { Measure } from '../olap/metrics/measures.js';
import { alertNotice, enqueueAlertNotification } from '../oltp/alert-notifications.js';
import { type AlertCheckRow, conditionOf, dueAlertIds, lockAlertForCheck, recordCheck } from '../oltp/alerts.repo.js';
import type { Sql } from '../oltp/db.js';
import { DrainLoop } from './drain-loop.js';

/** How often due alerts are looked for: an interval is checked at most this long after it settled. */
const INTERVAL_MS_DEFAULT = 10_000;
/**
 * How long after an interval ends it is checked: the events of its last seconds are still on
 * their way to ClickHouse (the ingest log ships about once a second, the queue as fast).
 */
export const ALERT_SETTLE_MS = 60_000;
/** The plans whose alerts are checked (Free has none; a downgrade keeps them, unchecked). */
const CHECKED_PLANS = PLANS.filter((plan) => PLAN_LIMITS[plan].maxAlertsPerProject > 0);

export type AlertEvaluatorOptions = {
  /** The clock: the wall clock in service, a test's own in tests. */
  now?: () => Date;
  intervalMs?: number;
  settleMs?: number;
  /** Alerts looked at per round. */
  batchSize?: number;
};

/**
 * Checks each enabled alert once per completed interval (docs/notifications.md "Alerts"): the
 * value of the interval that ended (after ALERT_SETTLE_MS), computed as the metrics API answers
 * it (src/olap/metrics/alert-value.ts), judged by the condition, and recorded with the alert's new
 * state in one transaction, together with the notification of a change of state (the outbox).
 *
 * Exactly once among any number of worker processes: the alert row is locked for its check
 * (`for update skip locked`: a second worker skips it), the check commits only if the interval is
 * later than what the alert checked through, and (alert, interval) is a unique key. After a stop
 * the missed intervals are not replayed: only the latest completed one is checked, and its check
 * records how many were skipped.
 */
export class AlertEvaluator {
  readonly #loop: DrainLoop;
  readonly #now: () => Date;
  #stopping = false;

  constructor(
    private readonly sql: Sql,
    private readonly clickhouse: ClickHouseClient,
    private readonly logger: Logger,
    private readonly options: AlertEvaluatorOptions = {},
  ) {
    this.#now = options.now ?? (() => new Date());
    this.#loop = new DrainLoop(() => this.runOnce(), logger, {
      intervalMs: options.intervalMs ?? INTERVAL_MS_DEFAULT,
      failure: 'alert evaluation failed, will retry',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    this.#stopping = true;
    return this.#loop.stop();
  }

  /** The latest completed interval of each unit at the clock's now, less the settling time. */
  #latest(): Record<AlertInterval, Date> {
    const settled = new Date(this.#now().getTime() - (this.options.settleMs ?? ALERT_SETTLE_MS));
    return Object.fromEntries(ALERT_INTERVALS.map((unit) => [unit, lastCompletedInterval(settled, unit).start])) as Record<
      AlertInterval,
      Date
    >;
  }

  /** Checks every alert that is due by the clock now; answers the checks this process recorded. */
  async runOnce(): Promise<AlertCheckRow[]> {
    const recorded: AlertCheckRow[] = [];
    const seen = new Set<string>();
    while (!this.#stopping) {
      const ids = (await dueAlertIds(this.sql, this.#latest(), CHECKED_PLANS, this.options.batchSize ?? 100)).filter((id) => !seen.has(id));
      if (ids.length === 0) break;
      for (const id of ids) {
        seen.add(id);
        try {
          const check = await this.checkAlert(id);
          if (check) recorded.push(check);
        } catch (error) {
          // One alert's failure (ClickHouse busy, a regex the engine no longer takes) must not
          // hold up the others: it is tried again at the next round.
          this.logger.warn({ err: error, alertId: id }, 'alert check failed, will retry');
        }
      }
    }
    if (recorded.length > 0) this.logger.info({ checks: recorded.length }, 'alerts checked');
    return recorded;
  }

  /**
   * Checks one alert for its latest completed interval, if no process did; null when it is not
   * due, is being checked by another process, or was checked meanwhile.
   */
  async checkAlert(id: string): Promise<AlertCheckRow | null> {
    const latest = this.#latest();
    return this.sql.begin(async (tx) => {
      const alert = await lockAlertForCheck(tx, id);
      if (!alert || PLAN_LIMITS[alert.plan].maxAlertsPerProject === 0) return null;
      const unit = alert.interval_unit;
      const start = latest[unit];
      if (alert.checked_through && alert.checked_through.getTime() >= start.getTime()) return null;
      const span = { start, end: new Date(start.getTime() + INTERVAL_MS[unit]) };
      const { value, previous } = await alertValue(
        this.clickhouse,
        { projectId: alert.project_id, plan: alert.plan, surface: 'admin', sessionTimeoutMinutes: alert.session_timeout_minutes },
        { measure: alert.measure as Measure, event: alert.event ?? undefined, filters: alert.filters as FilterList, interval: unit },
        span,
      );
      const judgement = judge(conditionOf(alert), value, previous);
      const { state, change } = nextState(alert.state, judgement.holds);
      const skipped = alert.checked_through
        ? Math.max(0, Math.round((start.getTime() - alert.checked_through.getTime()) / INTERVAL_MS[unit]) - 1)
        : 0;
      const check = await recordCheck(tx, alert.id, {
        intervalStart: span.start,
        intervalEnd: span.end,
        value,
        previousValue: previous,
        changePercent: judgement.changePercent,
        state,
        notified: change,
        skipped,
        checkedAt: this.#now(),
      });
      if (check && change) {
        await enqueueAlertNotification(
          tx,
          alert.project_id,
          alertNotice(alert, change, {
            intervalStart: span.start,
            intervalEnd: span.end,
            value,
            previousValue: previous,
            changePercent: judgement.changePercent,
            conditionMet: judgement.holds,
          }),
        );
      }
      return check;
    });
  }
}
