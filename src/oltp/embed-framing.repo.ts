import type { SqlLike } from './db.js';

/**
 * Who may frame a project's widget and board pages: its `allowed_origins` (empty: any). Read
 * through the row as JSON so this query holds whether or not the column's migration has run yet
 * (before it, a project has no list, which means any origin).
 */
type FramingRow = { origins: unknown };

function originsOf(row: FramingRow | undefined): string[] | null {
  if (!row) return null;
  return Array.isArray(row.origins) ? row.origins.filter((origin): origin is string => typeof origin === 'string') : [];
}

/** The allowed origins of the live project with this publishable key; null when there is none. */
export async function framingOriginsByPublishableKey(sql: SqlLike, publishableKey: string): Promise<string[] | null> {
  const [row] = await sql<FramingRow[]>`
    select to_jsonb(p) -> 'allowed_origins' as origins
    from projects p
    where p.publishable_key = ${publishableKey} and not p.archived and not p.suspended`;
  return originsOf(row);
}

/** The allowed origins of the public board at this slug; null when no public board has it. */
export async function framingOriginsByBoardSlug(sql: SqlLike, slug: string): Promise<string[] | null> {
  const [row] = await sql<FramingRow[]>`
    select to_jsonb(p) -> 'allowed_origins' as origins
    from projects p
    where p.slug = ${slug} and p.board_public and not p.suspended`;
  return originsOf(row);
}

/** The project of the public board at this slug, with its allowed origins; null when no public board has it. */
export async function publicBoardProject(sql: SqlLike, slug: string): Promise<{ id: string; name: string; origins: string[] } | null> {
  const [row] = await sql<(FramingRow & { id: string; name: string })[]>`
    select p.id, p.name, to_jsonb(p) -> 'allowed_origins' as origins
    from projects p
    where p.slug = ${slug} and p.board_public and not p.suspended`;
  const origins = originsOf(row);
  return row && origins ? { id: row.id, name: row.name, origins } : null;
}
