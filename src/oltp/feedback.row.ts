import { apiTime, apiTimeOrNull } from '../core/time.js';
/*
 * A feedback item as PostgreSQL holds it, and the one JSON form it takes outside the store: the
 * API's answer (SPEC 2.1) and the snapshot frozen into a notification are the same object, so a
 * webhook receiver reads the fields a client of the API reads.
 */

export const FEEDBACK_STATUSES = ['pending', 'approved', 'in_progress', 'testflight', 'completed', 'rejected'] as const;
export type FeedbackStatus = (typeof FEEDBACK_STATUSES)[number];
export const FEEDBACK_CATEGORIES = ['feature_request', 'bug_report', 'improvement', 'other'] as const;
export type FeedbackCategory = (typeof FEEDBACK_CATEGORIES)[number];
export const FEEDBACK_SORTS = ['votes', 'newest', 'oldest', 'comments'] as const;
export type FeedbackSort = (typeof FEEDBACK_SORTS)[number];
/** The owner's list (admin token) also sorts by the voters' total MRR; the client app's list keeps SPEC 4.1's four. */
export const OWNER_FEEDBACK_SORTS = [...FEEDBACK_SORTS, 'mrr'] as const;
export type OwnerFeedbackSort = (typeof OWNER_FEEDBACK_SORTS)[number];

/** Statuses in which voting is blocked (SPEC 2.2). */
export const VOTING_CLOSED_STATUSES: ReadonlySet<FeedbackStatus> = new Set(['completed', 'rejected']);

export type FeedbackRow = {
  id: string;
  project_id: string;
  title: string;
  description: string;
  status: FeedbackStatus;
  category: FeedbackCategory;
  user_id: string;
  user_email: string | null;
  vote_count: number;
  has_voted: boolean;
  comment_count: number;
  total_mrr: number | null;
  created_at: Date;
  updated_at: Date;
  rejection_reason: string | null;
  merged_into_id: string | null;
  merged_at: Date | null;
  /** An anonymous board submission not yet approved by an owner (docs/widget.md). */
  awaiting_approval: boolean;
  merged_feedback_ids: string[] | null;
};

/** Feedback as SPEC 2.1 spells it, from a row. */
export function feedbackResource(row: FeedbackRow) {
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    status: row.status,
    category: row.category,
    user_id: row.user_id,
    user_email: row.user_email,
    vote_count: row.vote_count,
    has_voted: row.has_voted,
    comment_count: row.comment_count,
    total_mrr: row.total_mrr === null ? null : Number(row.total_mrr),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
    rejection_reason: row.rejection_reason,
    merged_into_id: row.merged_into_id,
    merged_at: apiTimeOrNull(row.merged_at),
    merged_feedback_ids: row.merged_feedback_ids,
  };
}
