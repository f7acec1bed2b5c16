import { type FeedbackStatus, STATUS_LABELS } from '../lib/format';

export function StatusBadge({ status }: { status: FeedbackStatus }) {
  return <span class={`badge status-${status}`}>{STATUS_LABELS[status]}</span>;
}

/**
 * What an item's state is for the owner: a merged item lives on in its target, so it shows as
 * merged, not with the status it had when it was merged (that status no longer means anything).
 */
export function ItemStateBadge({ item }: { item: { status: FeedbackStatus; merged_into_id?: string | null } }) {
  if (item.merged_into_id) return <span class="badge badge-merged">Merged</span>;
  return <StatusBadge status={item.status} />;
}
