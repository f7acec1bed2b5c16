import {
  type GithubIssue,
  issueDescription,
  type LinearIssue,
  type TrackerConnection,
  type TrackerGateway,
  votesLine,
} from '../core/trackers.js';
import type { FeedbackRow, FeedbackStatus } from './feedback.row.js';
import { GITHUB_STATE_NAMES, githubChangeFor, linearStateFor } from './tracker-status-map.js';
import type { NewLink, TrackerIntegrationRow } from './trackers.repo.js';

/*
 * Making an item's issue in its tracker (docs/integrations.md "Out"): by hand (POST
 * /projects/:id/feedbacks/:feedbackId/issues, within the request) and by itself for a new item of
 * an integration with `auto_create` (a delivery of the item's `feedback.created`). It sits beside
 * the status map, in the lowest layer both the API and the workers reach; the tracker calls go
 * through the gateway they pass in, and a failed call is the gateway's TrackerError, for each
 * caller to answer in its own terms.
 */

/** The link's fields an issue gives, the item and its integration aside. */
export type IssueLinkFields = Omit<NewLink, 'projectId' | 'feedbackId' | 'integrationId'>;

/** A GitHub issue as a link records it, standing for `syncedStatus` (null: not known yet). */
export const githubLinkFields = (issue: GithubIssue, syncedStatus: FeedbackStatus | null): IssueLinkFields => ({
  externalId: String(issue.number),
  issueKey: `#${issue.number}`,
  url: issue.html_url,
  title: issue.title,
  state: issue.state,
  stateName: GITHUB_STATE_NAMES[issue.state],
  syncedStatus,
});

/** A Linear issue as a link records it. */
export const linearLinkFields = (issue: LinearIssue, syncedStatus: FeedbackStatus | null): IssueLinkFields => ({
  externalId: issue.id,
  issueKey: issue.identifier,
  url: issue.url,
  title: issue.title,
  state: issue.state.id,
  stateName: issue.state.name,
  syncedStatus,
});

/** The item on the owners' dashboard, as an issue's description links it. */
export const itemUrl = (publicUrl: string, feedback: Pick<FeedbackRow, 'id' | 'project_id'>) =>
  `${publicUrl}/projects/${feedback.project_id}/feedback/${feedback.id}`;

/**
 * Creates the issue of an item: its title, its text with the votes, the voters' MRR and a link
 * to the item, in the state (and, on GitHub, with the label) the map gives the item's status.
 * GitHub creates issues open: a closed one takes a second call.
 */
export async function createIssue(
  gateway: TrackerGateway,
  connection: TrackerConnection,
  tracker: Pick<TrackerIntegrationRow, 'kind' | 'settings'>,
  feedback: FeedbackRow,
  publicUrl: string,
): Promise<IssueLinkFields> {
  const map = tracker.settings.status_map;
  const status = feedback.status;
  const totalMrr = feedback.total_mrr === null ? null : Number(feedback.total_mrr);
  const description = issueDescription({
    title: feedback.title,
    description: feedback.description,
    voteCount: feedback.vote_count,
    totalMrr,
    itemUrl: itemUrl(publicUrl, feedback),
  });
  const written = votesLine(feedback.vote_count, totalMrr);
  if (tracker.kind === 'github') {
    const repository = tracker.settings.target;
    const label = map.labels?.[status] ?? null;
    let issue = await gateway.github.createIssue(connection, repository, {
      title: feedback.title,
      body: description,
      labels: label ? [label] : [],
    });
    const change = githubChangeFor(map, status, issue);
    if (change) issue = await gateway.github.updateIssue(connection, repository, issue.number, change);
    return { ...githubLinkFields(issue, status), votesLine: written };
  }
  const teamId = tracker.settings.target;
  const states = await gateway.linear.listWorkflowStates(connection, teamId);
  const state = linearStateFor(map, status, states);
  const issue = await gateway.linear.createIssue(connection, {
    teamId,
    projectId: tracker.settings.linear_project_id,
    title: feedback.title,
    description,
    stateId: state?.id ?? null,
  });
  // Without a state of the mapped type the issue is in the team's default state, not ours.
  return { ...linearLinkFields(issue, state ? status : null), votesLine: written };
}
