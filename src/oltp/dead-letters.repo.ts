import type { SqlLike } from './db.js';

export const DEAD_LETTER_KINDS = ['event', 'fact'] as const;
export type DeadLetterKind = (typeof DEAD_LETTER_KINDS)[number];

/** A row ClickHouse refused for its data, as the writer records it. */
export type NewDeadLetter = {
  kind: DeadLetterKind;
  /** Null when the row's own project id is not a UUID. */
  projectId: string | null;
  /** Unique per kind (event: `project:event id`; fact: fact id): recording it again is a no-op. */
  rowKey: string;
  /** The row as JSON text (JSON.stringify escapes NUL and lone surrogates). */
  payload: string;
  errorCode: string;
  errorName: string;
  error: string;
};

export type DeadLetterRow = {
  id: string;
  kind: DeadLetterKind;
  project_id: string | null;
  row_key: string;
  payload: string;
  error_code: string;
  error_name: string;
  error: string;
  created_at: Date;
};

/**
 * Records dead letters; one already recorded (same kind and row key, from an earlier attempt at
 * the same batch) is left as it is. Returns how many were new, per kind.
 */
export async function recordDeadLetters(sql: SqlLike, letters: NewDeadLetter[]): Promise<Map<DeadLetterKind, number>> {
  const added = new Map<DeadLetterKind, number>();
  if (letters.length === 0) return added;
  const rows = await sql<{ kind: DeadLetterKind }[]>`
    insert into dead_letters ${sql(
      letters.map((letter) => ({
        kind: letter.kind,
        project_id: letter.projectId,
        row_key: letter.rowKey,
        payload: letter.payload,
        error_code: letter.errorCode,
        error_name: letter.errorName,
        error: letter.error,
      })),
    )}
    on conflict (kind, row_key) do nothing
    returning kind`;
  for (const row of rows) added.set(row.kind, (added.get(row.kind) ?? 0) + 1);
  return added;
}

export type DeadLetterFilter = {
  kind?: DeadLetterKind | undefined;
  projectId?: string | undefined;
  limit: number;
  offset: number;
};

/** Dead letters, newest first, with the total matching the filter (for paging). */
export async function listDeadLetters(sql: SqlLike, filter: DeadLetterFilter): Promise<{ total: number; rows: DeadLetterRow[] }> {
  const kind = filter.kind ?? null;
  const projectId = filter.projectId ?? null;
  const where = sql`
    where (${kind}::text is null or kind = ${kind})
      and (${projectId}::uuid is null or project_id = ${projectId}::uuid)`;
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from dead_letters ${where}`;
  const rows = await sql<DeadLetterRow[]>`
    select id::text, kind, project_id, row_key, payload, error_code, error_name, error, created_at
    from dead_letters ${where}
    order by created_at desc, id desc
    limit ${filter.limit} offset ${filter.offset}`;
  return { total: count?.total ?? 0, rows };
}

/**
 * Deletes the dead letters of the project that hold the user (erasure, docs/data-rights.md): an
 * event's or a fact's row as JSON text, with its `user_id`. The payload is matched as text, not
 * cast to jsonb, because many dead letters are rows with exactly what jsonb refuses (NUL, a lone
 * surrogate); JSON.stringify wrote them, so the user's field has one spelling. Returns how many.
 */
export async function deleteDeadLettersOfUser(sql: SqlLike, projectId: string, userId: string): Promise<number> {
  const field = `"user_id":${JSON.stringify(userId)}`;
  const deleted = await sql`
    delete from dead_letters where project_id = ${projectId} and strpos(payload, ${field}) > 0`;
  return deleted.count;
}
