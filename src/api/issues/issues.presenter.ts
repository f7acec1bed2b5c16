import { apiTime } from '../../core/time.js';
import type { TrackerLinkRow } from '../../oltp/trackers.repo.js';

/** An item's linked issue (a link: the tracker, the issue's key, address and state as last seen). */
export function presentLinkedIssue(row: TrackerLinkRow) {
  return {
    id: row.id,
    feedback_id: row.feedback_id,
    integration_id: row.integration_id,
    kind: row.kind,
    external_id: row.external_id,
    key: row.issue_key,
    url: row.url,
    title: row.title,
    state: row.state,
    state_name: row.state_name,
    synced_status: row.synced_status,
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
