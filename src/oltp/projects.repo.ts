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
  /** The key made for web pages (pk_…): public by design, shown to the owner (docs/widget.md). */
  publishable_key: string;
  /** The HS256 secret the host app signs user tokens with; null until the owner creates one. */
  identity_secret: string | null;
  require_signed_identity: boolean;
  board_public: boolean;
  anonymous_feedback: boolean;
  /** The public board's address: /board/<slug>. */
  slug: string;
  /** The gap after which a user's next event starts a new session (018_session_timeout.sql, docs/sessions.md). */
  session_timeout_minutes: number;
  created_at: Date;
  updated_at: Date;
};

const IDENTITY_COLUMNS = [
  'allowed_origins',
  'publishable_key',
  'identity_secret',
  'require_signed_identity',
  'board_public',
  'anonymous_feedback',
  'slug',
  'session_timeout_minutes',
];

/** A project as the API-key and admin layers see it: with its account's plan. */
export type ProjectWithPlan = Project & { plan: Plan };

/** One project with its account's plan, found by a condition on `p` (projects). */
async function findProjectWhere(sql: SqlLike, condition: ReturnType<SqlLike>): Promise<ProjectWithPlan | null> {
  const [project] = await sql<ProjectWithPlan[]>`
    select p.id, p.account_id, p.name, p.archived, p.suspended, p.created_at, p.updated_at, a.plan,
      p.publishable_key, p.identity_secret, p.require_signed_identity, p.board_public, p.anonymous_feedback, p.slug, p.allowed_origins,
      p.session_timeout_minutes
    from projects p
    join accounts a on a.id = p.account_id
    where ${condition}`;
  return project ?? null;
}

export const findProjectByApiKeyHash = (sql: SqlLike, keyHash: Buffer) => findProjectWhere(sql, sql`p.api_key_hash = ${keyHash}`);

export const findProjectByPublishableKey = (sql: SqlLike, key: string) => findProjectWhere(sql, sql`p.publishable_key = ${key}`);

/** A project whose board is public, by its slug (GET /board/:slug); null otherwise. */
export const findPublicBoard = (sql: SqlLike, slug: string) =>
  findProjectWhere(sql, sql`p.slug = ${slug} and p.board_public and not p.suspended`);

export const findProject = (sql: SqlLike, id: string) => findProjectWhere(sql, sql`p.id = ${id}`);

export async function listProjects(sql: SqlLike, accountId: string): Promise<Project[]> {
  return sql<Project[]>`
    select id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}
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
    returning id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}`;
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
    requireSignedIdentity?: boolean | undefined;
    boardPublic?: boolean | undefined;
    anonymousFeedback?: boolean | undefined;
    allowedOrigins?: string[] | undefined;
    sessionTimeoutMinutes?: number | undefined;
  },
): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set
      name = coalesce(${changes.name ?? null}, name),
      archived = coalesce(${changes.archived ?? null}::boolean, archived),
      suspended = coalesce(${changes.suspended ?? null}::boolean, suspended),
      allowed_origins = coalesce(${changes.allowedOrigins ?? null}::text[], allowed_origins),
      require_signed_identity = coalesce(${changes.requireSignedIdentity ?? null}::boolean, require_signed_identity),
      board_public = coalesce(${changes.boardPublic ?? null}::boolean, board_public),
      anonymous_feedback = coalesce(${changes.anonymousFeedback ?? null}::boolean, anonymous_feedback),
      session_timeout_minutes = coalesce(${changes.sessionTimeoutMinutes ?? null}::integer, session_timeout_minutes),
      updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}`;
  return project ?? null;
}

/** Replaces the project's key hash: the previous key stops authenticating with this commit. */
export async function replaceApiKey(sql: SqlLike, id: string, apiKeyHash: Buffer): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set api_key_hash = ${apiKeyHash}, updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}`;
  return project ?? null;
}

/** Replaces the project's identity secret: tokens signed with the previous one stop verifying. */
export async function replaceIdentitySecret(sql: SqlLike, id: string, secret: string): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set identity_secret = ${secret}, updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}`;
  return project ?? null;
}

/** Replaces the project's publishable key: pages still using the old one get 401 at once. */
export async function replacePublishableKey(sql: SqlLike, id: string, key: string): Promise<Project | null> {
  const [project] = await sql<Project[]>`
    update projects set publishable_key = ${key}, updated_at = now()
    where id = ${id}
    returning id, account_id, name, archived, suspended, created_at, updated_at, ${sql(IDENTITY_COLUMNS)}`;
  return project ?? null;
}
