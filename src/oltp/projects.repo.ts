import type { Plan } from '../core/plans.js';
import type { Sql, SqlLike } from './db.js';

export type Project = {
  id: string;
  account_id: string;
  name: string;
  archived: boolean;
  suspended: boolean;
  /** Browser origins the API key may be used from; empty: any (013_project_allowed_origins.sql). */
  allowed_origins: string[];
  created_at: Date;
  updated_at: Date;
};

/** A project as the API-key and admin layers see it: with its account's plan. */
export type ProjectWithPlan = Project & { plan: Plan };

/** One project with its account's plan, found by a condition on `p` (projects). */
async function findProjectWhere(sql: SqlLike, condition: ReturnType<SqlLike>): Promise<ProjectWithPlan | null> {
  const [project] = await sql<ProjectWithPlan[]>`
    select p.id, p.account_id, p.name, p.archived, p.suspended, p.allowed_origins, p.created_at, p.updated_at, a.plan
    from projects p
    join accounts a on a.id = p.account_id
    where ${condition}`;
  return project ?? null;
}

export const findProjectByApiKeyHash = (sql: SqlLike, keyHash: Buffer) => findProjectWhere(sql, sql`p.api_key_hash = ${keyHash}`);

export const findProject = (sql: SqlLike, id: string) => findProjectWhere(sql, sql`p.id = ${id}`);

export async function listProjects(sql: SqlLike, accountId: string): Promise<Project[]> {
  return sql<Project[]>`
    select id, account_id, name, archived, suspended, allowed_origins, created_at, updated_at
    from projects
    where account_id = ${accountId}
    order by created_at, id`;
}

export type CreateProjectResult = { kind: 'created'; project: Project } | { kind: 'limit_reached'; limit: number };

/**
 * Creates a project unless the account already holds `maxProjects`. The account row is locked
 * for the count, so two concurrent creations cannot both slip under the limit.
 */
export async function createProject(
  sql: Sql,
  input: { accountId: string; name: string; apiKeyHash: Buffer; maxProjects: number | null },
): Promise<CreateProjectResult> {
  return sql.begin(async (tx) => {
    // Lock first, count after: in READ COMMITTED the count then sees every project committed by
    // the transactions that held the lock before us.
    await tx`select 1 from accounts where id = ${input.accountId} for update`;
    const [{ count } = { count: 0 }] = await tx<{ count: number }[]>`
      select count(*)::int as count from projects where account_id = ${input.accountId}`;
    if (input.maxProjects !== null && count >= input.maxProjects) {
      return { kind: 'limit_reached', limit: input.maxProjects };
    }
    const [project] = await tx<Project[]>`
    insert into projects (account_id, name, api_key_hash)
    values (${input.accountId}, ${input.name}, ${input.apiKeyHash})
    returning id, account_id, name, archived, suspended, allowed_origins, created_at, updated_at`;
    return { kind: 'created', project: project as Project };
  });
}

export async function updateProject(
  sql: SqlLike,
  id: string,
  changes: {
    name?: string | undefined;
    archived?: boolean | undefined;
    suspended?: boolean | undefined;
    allowedOrigins?: string[] | undefined;
  },
): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set
      name = coalesce(${changes.name ?? null}, name),
      archived = coalesce(${changes.archived ?? null}::boolean, archived),
      suspended = coalesce(${changes.suspended ?? null}::boolean, suspended),
      allowed_origins = coalesce(${changes.allowedOrigins ?? null}::text[], allowed_origins),
      updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, allowed_origins, created_at, updated_at`;
  return project ?? null;
}

/** Replaces the project's key hash: the previous key stops authenticating with this commit. */
export async function replaceApiKey(sql: SqlLike, id: string, apiKeyHash: Buffer): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set api_key_hash = ${apiKeyHash}, updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, allowed_origins, created_at, updated_at`;
  return project ?? null;
}
