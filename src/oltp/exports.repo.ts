import type { Sql } from './db.js';

/** Rows fetched from PostgreSQL per round trip of an export's cursor: memory stays at one batch. */
export const EXPORT_CURSOR_ROWS = 1_000;

/** A feedback item as exported (docs/data-rights.md): every item, merged ones too. */
export type FeedbackExportRow = {
  id: string;
  title: string;
  description: string;
  status: string;
  category: string;
  user_id: string;
  user_email: string | null;
  vote_count: number;
  total_mrr: number | null;
  comment_count: number;
  merged_into_id: string | null;
  merged_at: string | null;
  rejection_reason: string | null;
  created_at: string;
  updated_at: string;
};

export const FEEDBACK_EXPORT_COLUMNS: readonly (keyof FeedbackExportRow)[] = [
  'id',
  'title',
  'description',
  'status',
  'category',
  'user_id',
  'user_email',
  'vote_count',
  'total_mrr',
  'comment_count',
  'merged_into_id',
  'merged_at',
  'rejection_reason',
  'created_at',
  'updated_at',
];

// Timestamps are exported as ISO 8601 UTC text with microseconds (to_char below), the same in
// every row and format; a JS Date would drop the microseconds.

/**
 * Every feedback item of the project, oldest first, read through a server-side cursor in batches
 * of EXPORT_CURSOR_ROWS: the caller pulls the next batch only when it has written the last one,
 * and leaving the loop early closes the cursor.
 */
export function feedbackExportBatches(sql: Sql, projectId: string): AsyncIterable<FeedbackExportRow[]> {
  return sql<FeedbackExportRow[]>`
    select f.id, f.title, f.description, f.status, f.category, f.user_id, f.user_email, f.vote_count,
      (select sum(u.mrr) from votes v join sdk_users u on u.project_id = f.project_id and u.user_id = v.user_id
       where v.feedback_id = f.id)::float8 as total_mrr,
      f.comment_count, f.merged_into_id,
      to_char(f.merged_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as merged_at, f.rejection_reason,
      to_char(f.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at,
      to_char(f.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as updated_at
    from feedbacks f
    where f.project_id = ${projectId}
    order by f.created_at, f.id`.cursor(EXPORT_CURSOR_ROWS);
}

/** An SDK user as exported. */
export type SdkUserExportRow = {
  id: string;
  user_id: string;
  mrr: number | null;
  first_seen_at: string;
  last_seen_at: string;
  /** What the user registered with (017_sdk_user_profile.sql); last, so older readers of the columns keep theirs. */
  email: string | null;
  name: string | null;
};

export const SDK_USER_EXPORT_COLUMNS: readonly (keyof SdkUserExportRow)[] = [
  'id',
  'user_id',
  'mrr',
  'first_seen_at',
  'last_seen_at',
  'email',
  'name',
];

/** Every SDK user of the project, first registered first, through a cursor like feedbackExportBatches. */
export function sdkUserExportBatches(sql: Sql, projectId: string): AsyncIterable<SdkUserExportRow[]> {
  return sql<SdkUserExportRow[]>`
    select id, user_id, mrr,
      to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as first_seen_at,
      to_char(last_seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as last_seen_at,
      email, name
    from sdk_users
    where project_id = ${projectId}
    order by first_seen_at, id`.cursor(EXPORT_CURSOR_ROWS);
}
