import type { SqlLike } from './db.js';

/** A credential of the ClickHouse interface, without its secret (only its hash is stored). */
export type ClickhouseCredentialRow = {
  id: string;
  project_id: string;
  created_at: Date;
  last_used_at: Date | null;
};

const COLUMNS = ['id', 'project_id', 'created_at', 'last_used_at'];

export async function createClickhouseCredential(
  sql: SqlLike,
  input: { projectId: string; passwordHash: Buffer },
): Promise<ClickhouseCredentialRow> {
  const [row] = await sql<ClickhouseCredentialRow[]>`
    insert into clickhouse_credentials (project_id, password_hash)
    values (${input.projectId}, ${input.passwordHash})
    returning ${sql(COLUMNS)}`;
  if (!row) throw new Error('insert into clickhouse_credentials returned no row');
  return row;
}

/** The project's credentials, oldest first. */
export async function listClickhouseCredentials(sql: SqlLike, projectId: string): Promise<ClickhouseCredentialRow[]> {
  return sql<ClickhouseCredentialRow[]>`
    select ${sql(COLUMNS)} from clickhouse_credentials
    where project_id = ${projectId}
    order by created_at, id`;
}

/** Revokes one credential of the project (deletes it); null when the project has no such credential. */
export async function deleteClickhouseCredential(sql: SqlLike, projectId: string, id: string): Promise<ClickhouseCredentialRow | null> {
  const [row] = await sql<ClickhouseCredentialRow[]>`
    delete from clickhouse_credentials
    where id = ${id} and project_id = ${projectId}
    returning ${sql(COLUMNS)}`;
  return row ?? null;
}

/**
 * The credential whose password has this hash, if it belongs to `projectId` (the username), and
 * marks it used: last_used_at moves at most once a minute, so a busy credential does not write a
 * row per request. One statement, so a revoked credential is never found afterwards.
 */
export async function useClickhouseCredential(
  sql: SqlLike,
  input: { projectId: string; passwordHash: Buffer },
): Promise<ClickhouseCredentialRow | null> {
  const [row] = await sql<ClickhouseCredentialRow[]>`
    with found as (
      select id from clickhouse_credentials
      where password_hash = ${input.passwordHash} and project_id = ${input.projectId}
    ), touched as (
      update clickhouse_credentials c set last_used_at = now()
      from found
      where c.id = found.id and (c.last_used_at is null or c.last_used_at < now() - interval '1 minute')
    )
    select ${sql(COLUMNS)} from clickhouse_credentials
    where id in (select id from found)`;
  return row ?? null;
}
