import { parseIssueReference } from '../../core/trackers.js';
import type { FeedbackRow } from '../../oltp/feedback.row.js';
import { createIssue, githubLinkFields, type IssueLinkFields, linearLinkFields } from '../../oltp/tracker-issues.js';
import type { TrackerForCall } from '../../oltp/trackers.repo.js';
import type { RouteDeps } from '../define-route.js';
import { badRequest } from '../errors.js';
import { connectionOf, TRACKER_NAMES, trackerCall } from '../shared/tracker-calls.js';

/*
 * Making an item's issue, and reading an existing one to link it (POST
 * /projects/:id/feedbacks/:feedbackId/issues), within the request. Both answer the link to store.
 */

/**
 * Creates the issue of an item (src/oltp/tracker-issues.ts), a failed call answered as a request's:
 * a repository or team that is not there is a 400 naming it.
 */
export async function createIssueFor(deps: RouteDeps, tracker: TrackerForCall, feedback: FeedbackRow): Promise<IssueLinkFields> {
  const target = tracker.settings.target;
  const notFound =
    tracker.kind === 'github' ? `repository: ${target} is not there, or the token does not reach it` : `teamId: no such team, ${target}`;
  return trackerCall({ kind: tracker.kind, sql: deps.sql, saved: tracker, notFound }, () =>
    createIssue(deps.trackers, connectionOf(deps, tracker), tracker, feedback, deps.config.delivery.publicUrl),
  );
}

/**
 * Reads an existing issue to link it: GitHub `#123`, `123` or its URL (in the integration's
 * repository); Linear `ENG-42`, its URL or its id. It is left as it is: its state is recorded,
 * and our next status change brings it in line.
 */
export async function existingIssue(deps: RouteDeps, tracker: TrackerForCall, reference: string): Promise<IssueLinkFields> {
  const parsed = parseIssueReference(tracker.kind, reference);
  const name = TRACKER_NAMES[tracker.kind];
  if (!parsed) {
    throw badRequest(
      tracker.kind === 'github'
        ? 'issue: must be #123, 123 or the issue’s URL (https://github.com/owner/name/issues/123)'
        : 'issue: must be a Linear issue’s identifier (ENG-42), its URL or its id',
    );
  }
  const connection = connectionOf(deps, tracker);
  const context = {
    kind: tracker.kind,
    sql: deps.sql,
    saved: tracker,
    notFound: `issue: ${reference} is not in ${name} (or not visible to the token)`,
  };
  if ('number' in parsed) {
    const repository = tracker.settings.target;
    if (parsed.repository && parsed.repository.toLowerCase() !== repository.toLowerCase()) {
      throw badRequest(`issue: it is in ${parsed.repository}; this integration’s repository is ${repository}`);
    }
    const issue = await trackerCall(context, () => deps.trackers.github.getIssue(connection, repository, parsed.number));
    return githubLinkFields(issue, null);
  }
  return linearLinkFields(await trackerCall(context, () => deps.trackers.linear.getIssue(connection, parsed.identifier)), null);
}
