export const FACT_KINDS = [
  'feedback_created',
  'feedback_status_changed',
  'feedback_merged',
  'vote_added',
  'vote_removed',
  'comment_added',
  'sdk_user_registered',
] as const;
export type FactKind = (typeof FACT_KINDS)[number];

/** What a repository records about one change; the outbox adds id and time. */
export type FactInput = {
  kind: FactKind;
  projectId: string;
  feedbackId?: string | undefined;
  userId?: string | undefined;
  category?: string | undefined;
  status?: string | undefined;
  previousStatus?: string | undefined;
  mergedIntoId?: string | undefined;
  commentId?: string | undefined;
  isAdmin?: boolean | undefined;
  mrr?: number | null | undefined;
  firstSeenAt?: string | undefined;
};

/** A fact as relayed to ClickHouse (the columns of the `facts` table). */
export type FactRow = {
  fact_id: string;
  project_id: string;
  kind: FactKind;
  occurred_at: string;
  feedback_id: string | null;
  user_id: string;
  category: string;
  status: string;
  previous_status: string;
  merged_into_id: string | null;
  comment_id: string | null;
  is_admin: boolean;
  mrr: number | null;
  first_seen_at: string | null;
};
