import type { SecretBox } from '../../core/secret-box.js';
import { type TrackerConnection, TrackerError, type TrackerGateway, votesLine, withVotesLine } from '../../core/trackers.js';
import type { SqlLike } from '../../oltp/db.js';
import { findFeedback } from '../../oltp/feedback.repo.js';
import { createIssue } from '../../oltp/tracker-issues.js';
import { GITHUB_STATE_NAMES, githubChangeFor, linearStateFor } from '../../oltp/tracker-status-map.js';
import {
  findLinkForPush,
  insertLink,
  listLinks,
  markNeedsAttention,
  setLinkState,
  setLinkVotesLine,
  type TrackerForCall,
  trackerForCall,
} from '../../oltp/trackers.repo.js';

/*
 * Out: from an item to its linked issue (docs/integrations.md "Out"). Each push reads the link,
 * its integration and the item as they are now (not as a notification froze them), decides, and
 * calls the tracker only for what differs: a status the issue already stands for (one the tracker
 * itself set, the no-loop rule), or a votes line already written, costs no call. A failed call
 * is a TrackerError for the caller (the deliveries' retries, Retry-After); a refused token first
 * marks the integration as needing attention.
 */

export type OutboundDeps = {
  sql: SqlLike;
  trackers: TrackerGateway;
  secretBox: SecretBox;
  /** The service's public address: an issue made from an item links to it there. */
  publicUrl: string;
};

export type PushResult = {
  /** `pushed`: the tracker was changed; `in_step`: nothing differed; `gone`: no such link (unlinked, removed); `skipped`: not sent (`detail`). */
  outcome: 'pushed' | 'in_step' | 'gone' | 'skipped';
  /** The calls made to the tracker. */
  calls: number;
  detail: string;
};

type Loaded = { link: NonNullable<Awaited<ReturnType<typeof findLinkForPush>>>; tracker: TrackerForCall; connection: TrackerConnection };

/** The link and its integration, when a push may be made: null (with why) when it may not. */
async function load(deps: OutboundDeps, linkId: string): Promise<Loaded | PushResult> {
  const link = await findLinkForPush(deps.sql, linkId);
  if (!link) return { outcome: 'gone', calls: 0, detail: 'the issue was unlinked' };
  const tracker = await trackerForCall(deps.sql, link.project_id, link.integration_id);
  if (!tracker) return { outcome: 'gone', calls: 0, detail: 'the integration was removed' };
  if (!tracker.enabled) return { outcome: 'skipped', calls: 0, detail: 'the integration is disabled' };
  assertTokenWorks(tracker);
  return { link, tracker, connection: { apiUrl: tracker.url, token: deps.secretBox.open(tracker.token_sealed) } };
}

/** The rule of every call: never with the token the tracker refused; the owner gives another (PATCH its token). */
function assertTokenWorks(tracker: TrackerForCall): void {
  if (tracker.settings.needs_attention)
    throw new TrackerError('unauthorized', `the integration needs attention: ${tracker.settings.needs_attention}`);
}

/** Counts the calls of a push, and marks the integration when the tracker refuses its token. */
function counted(deps: OutboundDeps, tracker: TrackerForCall) {
  let calls = 0;
  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    calls++;
    try {
      return await run();
    } catch (error) {
      if (error instanceof TrackerError && error.needsAttention) await markNeedsAttention(deps.sql, tracker.id, error.message);
      throw error;
    }
  };
  return { call, calls: () => calls };
}

/** Status out: the issue follows the item's status through the map's `out`. */
export async function pushStatus(deps: OutboundDeps, linkId: string): Promise<PushResult> {
  const loaded = await load(deps, linkId);
  if (!('link' in loaded)) return loaded;
  const { link, tracker, connection } = loaded;
  const item = await findFeedback(deps.sql, link.project_id, link.feedback_id, undefined);
  if (!item) return { outcome: 'gone', calls: 0, detail: 'the item was deleted' };
  const status = item.status;
  // The issue stands for this status already: the tracker set it (no loop), or our last push did.
  if (link.synced_status === status) return { outcome: 'in_step', calls: 0, detail: `${link.issue_key} stands for ${status} already` };
  const map = tracker.settings.status_map;
  const { call, calls } = counted(deps, tracker);
  if (tracker.kind === 'github') {
    const repository = tracker.settings.target;
    const number = Number(link.external_id);
    const issue = await call(() => deps.trackers.github.getIssue(connection, repository, number));
    const change = githubChangeFor(map, status, issue);
    const after = change ? await call(() => deps.trackers.github.updateIssue(connection, repository, number, change)) : issue;
    await setLinkState(deps.sql, link.id, { state: after.state, stateName: GITHUB_STATE_NAMES[after.state], syncedStatus: status });
    return {
      outcome: change ? 'pushed' : 'in_step',
      calls: calls(),
      detail: `${link.issue_key} ${GITHUB_STATE_NAMES[after.state]} for ${status}`,
    };
  }
  const wanted = map.out[status];
  const states = await call(() => deps.trackers.linear.listWorkflowStates(connection, tracker.settings.target));
  const state = linearStateFor(map, status, states);
  if (!state) return { outcome: 'skipped', calls: calls(), detail: `the team has no state ${wanted} for ${status}` };
  if (state.id === link.state) {
    await setLinkState(deps.sql, link.id, { state: state.id, stateName: state.name, syncedStatus: status });
    return { outcome: 'in_step', calls: calls(), detail: `${link.issue_key} is ${state.name} already` };
  }
  const issue = await call(() => deps.trackers.linear.updateIssue(connection, link.external_id, { stateId: state.id }));
  await setLinkState(deps.sql, link.id, { state: issue.state.id, stateName: issue.state.name, syncedStatus: status });
  return { outcome: 'pushed', calls: calls(), detail: `${link.issue_key} ${issue.state.name} for ${status}` };
}

/**
 * Votes out: the votes line of the issue's description (votes and voters' MRR) brought up to
 * date. An issue whose description has no such line (one linked as it was, written by people)
 * keeps its description.
 */
export async function pushVotes(deps: OutboundDeps, linkId: string): Promise<PushResult> {
  const loaded = await load(deps, linkId);
  if (!('link' in loaded)) return loaded;
  const { link, tracker, connection } = loaded;
  const item = await findFeedback(deps.sql, link.project_id, link.feedback_id, undefined);
  if (!item) return { outcome: 'gone', calls: 0, detail: 'the item was deleted' };
  const mrr = item.total_mrr === null ? null : Number(item.total_mrr);
  const line = votesLine(item.vote_count, mrr);
  if (link.votes_line === line) return { outcome: 'in_step', calls: 0, detail: 'the votes line is written already' };
  const { call, calls } = counted(deps, tracker);
  if (tracker.kind === 'github') {
    const repository = tracker.settings.target;
    const number = Number(link.external_id);
    const issue = await call(() => deps.trackers.github.getIssue(connection, repository, number));
    const body = withVotesLine(issue.body, item.vote_count, mrr);
    if (body === null) return { outcome: 'skipped', calls: calls(), detail: `${link.issue_key} has no votes line` };
    if (body !== issue.body) await call(() => deps.trackers.github.updateIssue(connection, repository, number, { body }));
  } else {
    const issue = await call(() => deps.trackers.linear.getIssue(connection, link.external_id));
    const description = withVotesLine(issue.description, item.vote_count, mrr);
    if (description === null) return { outcome: 'skipped', calls: calls(), detail: `${link.issue_key} has no votes line` };
    if (description !== issue.description)
      await call(() => deps.trackers.linear.updateIssue(connection, link.external_id, { description }));
  }
  await setLinkVotesLine(deps.sql, link.id, line);
  return { outcome: calls() > 1 ? 'pushed' : 'in_step', calls: calls(), detail: line };
}

/**
 * A new item's issue, in a tracker that makes one for every new item (`auto_create`): created as
 * "Create issue" creates it, and linked. The item and the integration are read as they are now:
 * an item deleted, merged or held for approval since, an integration disabled or no longer
 * creating issues, or an item linked by hand meanwhile, make none (`skipped`, `gone`, `in_step`).
 */
export async function createNewItemIssue(deps: OutboundDeps, integrationId: string, feedbackId: string): Promise<PushResult> {
  const tracker = await trackerForCall(deps.sql, null, integrationId);
  if (!tracker) return { outcome: 'gone', calls: 0, detail: 'the integration was removed' };
  if (!tracker.enabled) return { outcome: 'skipped', calls: 0, detail: 'the integration is disabled' };
  if (!tracker.settings.auto_create) return { outcome: 'skipped', calls: 0, detail: 'the integration no longer creates issues by itself' };
  assertTokenWorks(tracker);
  const item = await findFeedback(deps.sql, tracker.project_id, feedbackId, undefined);
  if (!item) return { outcome: 'gone', calls: 0, detail: 'the item was deleted' };
  if (item.merged_into_id) return { outcome: 'skipped', calls: 0, detail: `the item was merged into ${item.merged_into_id}` };
  if (item.awaiting_approval) return { outcome: 'skipped', calls: 0, detail: 'the item is held for approval: create its issue by hand' };
  const linked = (await listLinks(deps.sql, tracker.project_id, item.id)).find((link) => link.integration_id === tracker.id);
  if (linked) return { outcome: 'in_step', calls: 0, detail: `the item has ${linked.issue_key} already` };
  const { call, calls } = counted(deps, tracker);
  const connection = { apiUrl: tracker.url, token: deps.secretBox.open(tracker.token_sealed) };
  const fields = await call(() => createIssue(deps.trackers, connection, tracker, item, deps.publicUrl));
  const result = await insertLink(deps.sql, { ...fields, projectId: tracker.project_id, feedbackId: item.id, integrationId: tracker.id });
  // Linked by hand while this one was being made: that link stays, and this issue is left unlinked.
  if (result.kind === 'taken')
    return { outcome: 'pushed', calls: calls(), detail: `${fields.issueKey} made, but the item was linked meanwhile` };
  return { outcome: 'pushed', calls: calls(), detail: `${fields.issueKey} made for the new item` };
}
