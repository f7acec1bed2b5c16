import type { Logger } from '../../core/logger.js';
import { PLAN_LIMITS } from '../../core/plans.js';
import type { Sql, SqlLike } from '../../oltp/db.js';
import { changeFeedbackStatus, lockFeedback } from '../../oltp/feedback.repo.js';
import { GITHUB_STATE_NAMES, mapStateIs, statusForState, type TrackerState } from '../../oltp/tracker-status-map.js';
import {
  claimInbound,
  failInbound,
  findTrackerIntegration,
  lockLinkByIssue,
  markInbound,
  type PendingInbound,
  pruneInbound,
  setLinkState,
} from '../../oltp/trackers.repo.js';
import { DrainLoop } from '../drain-loop.js';

/** Failed attempts to apply a delivery before it is set aside. */
const MAX_ATTEMPTS = 5;

/** Days a processed webhook is kept: its delivery id refuses a redelivery until then. */
export const INBOUND_RETENTION_DAYS = 30;

export type InboundOutcome = {
  outcome: 'status_changed' | 'unchanged' | 'echo' | 'unmapped' | 'unlinked' | 'ignored';
  detail: string | null;
};

/**
 * Applies the trackers' recorded webhooks (the inbound outbox, tracker_inbound) in order, one per
 * transaction: the webhook's state goes through the status map's `in` to the linked item, by the
 * same status change an owner makes (so voters get the usual emails), and the link records the
 * state and the status it stands for in the same commit. That record is the no-loop rule: the
 * status set here is the one the tracker already shows, so our push of it finds nothing to send.
 * Runs in every worker process; `skip locked` splits the work.
 */
export class TrackerInboundWorker {
  readonly #loop: DrainLoop;
  #lastPrune = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    options: { intervalMs?: number } = {},
  ) {
    this.#loop = new DrainLoop(() => this.drain(), logger, {
      intervalMs: options.intervalMs ?? 200,
      failure: 'tracker webhooks: processing failed',
    });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Processes until none is left; answers how many. */
  async drain(): Promise<number> {
    await this.pruneWhenDue();
    let done = 0;
    while (await this.step()) done++;
    return done;
  }

  /**
   * One delivery, in its own transaction; false when none was waiting. A delivery whose change
   * fails is rolled back and counted; after MAX_ATTEMPTS it is set aside, so that one bad
   * delivery never holds up the others (they are taken in order).
   */
  async step(): Promise<boolean> {
    let claimed: PendingInbound | undefined;
    try {
      return await this.sql.begin(async (tx) => {
        [claimed] = await claimInbound(tx, 1);
        if (!claimed) return false;
        const result = await applyInbound(tx, claimed);
        await markInbound(tx, claimed.id, result.outcome, result.detail);
        this.logger.debug({ inbound: claimed.id, integrationId: claimed.integration_id, ...result }, 'tracker webhook applied');
        return true;
      });
    } catch (error) {
      if (!claimed) throw error;
      const setAside = await failInbound(this.sql, claimed.id, String((error as Error)?.message ?? error), MAX_ATTEMPTS);
      this.logger.warn({ err: error, inbound: claimed.id, setAside }, 'tracker webhook could not be applied');
      return setAside;
    }
  }

  private async pruneWhenDue(): Promise<void> {
    if (Date.now() - this.#lastPrune < 10 * 60_000) return;
    this.#lastPrune = Date.now();
    while ((await pruneInbound(this.sql, INBOUND_RETENTION_DAYS, 1_000)) > 0) {
      // a large backlog goes in short transactions
    }
  }
}

/** What one recorded webhook changes (called in its transaction). */
export async function applyInbound(tx: SqlLike, pending: PendingInbound): Promise<InboundOutcome> {
  if (!PLAN_LIMITS[pending.plan].integrations) return { outcome: 'ignored', detail: 'the plan has no integrations (Pro or Team)' };
  const tracker = await findTrackerIntegration(tx, pending.project_id, pending.integration_id);
  if (!tracker) return { outcome: 'ignored', detail: 'the integration is gone' };
  if (!tracker.enabled) return { outcome: 'ignored', detail: 'the integration is disabled' };
  const event = pending.event;
  const externalId = event.tracker === 'github' ? String(event.number) : event.issue_id;
  const state: TrackerState =
    event.tracker === 'github' ? { id: event.state } : { id: event.state_id, type: event.state_type ?? undefined };
  const stateName =
    event.tracker === 'github' ? (GITHUB_STATE_NAMES[event.state as keyof typeof GITHUB_STATE_NAMES] ?? event.state) : event.state_name;
  const link = await lockLinkByIssue(tx, tracker.id, externalId);
  if (!link)
    return { outcome: 'unlinked', detail: `no item is linked to ${event.tracker === 'github' ? `#${event.number}` : event.issue_id}` };
  // The state the link holds already: our own push coming back, or a change seen before.
  if (link.state === state.id) return { outcome: 'echo', detail: `${link.issue_key} is ${stateName} already` };
  const map = tracker.settings.status_map;
  const status = statusForState(map, state);
  if (status === null) {
    await setLinkState(tx, link.id, { state: state.id, stateName, syncedStatus: link.synced_status });
    return { outcome: 'unmapped', detail: `${stateName} maps to no status: the item keeps its status` };
  }
  const item = await lockFeedback(tx, pending.project_id, link.feedback_id);
  if (!item) return { outcome: 'ignored', detail: 'the item is gone' };
  // A status that stands for this state already (testflight and in_progress both go to `started`) stays.
  if (item.status === status || mapStateIs(map.out[item.status], state)) {
    await setLinkState(tx, link.id, { state: state.id, stateName, syncedStatus: item.status });
    return { outcome: 'unchanged', detail: `${stateName}: the item is ${item.status} already` };
  }
  const changed = await changeFeedbackStatus(tx, pending.project_id, link.feedback_id, { status });
  if (changed.kind === 'merged') return { outcome: 'ignored', detail: `the item is merged into ${changed.intoId}` };
  if (changed.kind !== 'updated') return { outcome: 'ignored', detail: changed.kind };
  await setLinkState(tx, link.id, { state: state.id, stateName, syncedStatus: status });
  return { outcome: 'status_changed', detail: `${link.issue_key} ${stateName}: ${item.status} → ${status}` };
}
