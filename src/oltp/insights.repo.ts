import type { SqlLike } from './db.js';

/** The event names linked to a feedback item of the project, or null when none are. */
export async function findImpactLink(sql: SqlLike, projectId: string, feedbackId: string): Promise<string[] | null> {
  const [row] = await sql<{ event_names: string[] }[]>`
    select event_names from feedback_impact_links
    where feedback_id = ${feedbackId} and project_id = ${projectId}`;
  return row?.event_names ?? null;
}

/** Replaces the item's linked event names. */
export async function saveImpactLink(sql: SqlLike, projectId: string, feedbackId: string, eventNames: string[]): Promise<void> {
  await sql`
    insert into feedback_impact_links (feedback_id, project_id, event_names)
    values (${feedbackId}, ${projectId}, ${eventNames})
    on conflict (feedback_id) do update set event_names = excluded.event_names, updated_at = now()`;
}

export type SavedQueryRow = { id: string; name: string; sql: string; created_by: string; created_at: Date };

export async function listSavedQueries(sql: SqlLike, projectId: string): Promise<SavedQueryRow[]> {
  return sql<SavedQueryRow[]>`
    select id, name, sql, created_by, created_at from saved_queries
    where project_id = ${projectId}
    order by created_at desc, id desc`;
}

export async function createSavedQuery(
  sql: SqlLike,
  input: { projectId: string; name: string; sql: string; createdBy: string },
): Promise<SavedQueryRow> {
  const [row] = await sql<SavedQueryRow[]>`
    insert into saved_queries (project_id, name, sql, created_by)
    values (${input.projectId}, ${input.name}, ${input.sql}, ${input.createdBy})
    returning id, name, sql, created_by, created_at`;
  if (!row) throw new Error('insert returned no row');
  return row;
}

/** Deletes one saved query of the project; false when there is none with this id. */
export async function deleteSavedQuery(sql: SqlLike, projectId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from saved_queries where id = ${id} and project_id = ${projectId} returning id`;
  return rows.length > 0;
}

/** The email of an admin token's holder: the member's, else the account owner's. */
export async function tokenHolderEmail(sql: SqlLike, accountEmail: string, memberId: string | null): Promise<string> {
  if (memberId === null) return accountEmail;
  const [row] = await sql<{ email: string }[]>`select email from project_members where id = ${memberId}`;
  return row?.email ?? accountEmail;
}

/** The titles of the project's feedback items among `ids` (ids of deleted items are absent). */
export async function feedbackTitles(sql: SqlLike, projectId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; title: string }[]>`
    select id, title from feedbacks
    where project_id = ${projectId} and id = any(${ids as string[]}::uuid[])`;
  return new Map(rows.map((row) => [row.id, row.title]));
}
