import type { Plan } from '../core/plans.js';
import type { SqlLike } from './db.js';

/** A published saved query (sql/postgres/021_saved_query_endpoints.sql). */
export type EndpointRow = {
  id: string;
  saved_query_id: string;
  project_id: string;
  defaults: Record<string, string>;
  cache_seconds: number;
  cors_origins: string[];
  created_at: Date;
  token_made_at: Date;
};

/** An endpoint as a call needs it: its row, the token's hash, the saved query's text, and its project's account, plan and state. */
export type EndpointForCall = EndpointRow & { token_hash: Buffer; sql: string; account_id: string; plan: Plan; suspended: boolean };

export type EndpointSettings = { defaults: Record<string, string>; cacheSeconds: number; corsOrigins: string[] };

const COLUMNS = 'e.id, e.saved_query_id, e.project_id, e.defaults, e.cache_seconds, e.cors_origins, e.created_at, e.token_made_at';

/**
 * Publishes the saved query `savedQueryId` of the project (or republishes it: the id stays, the
 * settings and the token are replaced). Null when the project has no such saved query.
 */
export async function publishEndpoint(
  sql: SqlLike,
  input: { projectId: string; savedQueryId: string; tokenHash: Buffer } & EndpointSettings,
): Promise<EndpointRow | null> {
  const rows = await sql<EndpointRow[]>`
    insert into saved_query_endpoints as e (saved_query_id, project_id, token_hash, defaults, cache_seconds, cors_origins)
    select q.id, q.project_id, ${input.tokenHash}, ${sql.json(input.defaults)}, ${input.cacheSeconds}, ${input.corsOrigins}
    from saved_queries q
    where q.id = ${input.savedQueryId} and q.project_id = ${input.projectId}
    on conflict (saved_query_id) do update set
      token_hash = excluded.token_hash,
      defaults = excluded.defaults,
      cache_seconds = excluded.cache_seconds,
      cors_origins = excluded.cors_origins,
      token_made_at = now()
    returning ${sql.unsafe(COLUMNS)}`;
  return rows[0] ?? null;
}

/** The endpoint of a saved query of the project, or null. */
export async function findEndpointOfQuery(sql: SqlLike, projectId: string, savedQueryId: string): Promise<EndpointRow | null> {
  const [row] = await sql<EndpointRow[]>`
    select ${sql.unsafe(COLUMNS)} from saved_query_endpoints e
    where e.saved_query_id = ${savedQueryId} and e.project_id = ${projectId}`;
  return row ?? null;
}

/** A new token for the endpoint of a saved query; null when it is not published. */
export async function rotateEndpointToken(
  sql: SqlLike,
  projectId: string,
  savedQueryId: string,
  tokenHash: Buffer,
): Promise<EndpointRow | null> {
  const [row] = await sql<EndpointRow[]>`
    update saved_query_endpoints e set token_hash = ${tokenHash}, token_made_at = now()
    where e.saved_query_id = ${savedQueryId} and e.project_id = ${projectId}
    returning ${sql.unsafe(COLUMNS)}`;
  return row ?? null;
}

/** Unpublishes; the removed row, or null when there was none. */
export async function deleteEndpoint(sql: SqlLike, projectId: string, savedQueryId: string): Promise<EndpointRow | null> {
  const [row] = await sql<EndpointRow[]>`
    delete from saved_query_endpoints e
    where e.saved_query_id = ${savedQueryId} and e.project_id = ${projectId}
    returning ${sql.unsafe(COLUMNS)}`;
  return row ?? null;
}

/** What a call of GET /q/:id needs, in one round trip (a probe of each primary key). */
export async function findEndpointForCall(sql: SqlLike, endpointId: string): Promise<EndpointForCall | null> {
  const [row] = await sql<EndpointForCall[]>`
    select ${sql.unsafe(COLUMNS)}, e.token_hash, q.sql, p.account_id, p.suspended, a.plan
    from saved_query_endpoints e
    join saved_queries q on q.id = e.saved_query_id
    join projects p on p.id = e.project_id
    join accounts a on a.id = p.account_id
    where e.id = ${endpointId}`;
  return row ?? null;
}

export type EndpointCallRow = {
  called_at: Date;
  status: number;
  duration_ms: number;
  rows: number | null;
  cached: boolean;
  format: string;
};

/** Calls kept per endpoint: older ones are dropped as new ones come. */
export const CALLS_KEPT = 1000;

export type EndpointCall = Omit<EndpointCallRow, 'called_at'> & { endpoint_id: string; called_at: Date };

/**
 * Records calls, several in one insert; then, for each endpoint among them, drops its calls past
 * CALLS_KEPT (one probe of the index each).
 */
export async function recordEndpointCalls(sql: SqlLike, calls: readonly EndpointCall[]): Promise<void> {
  if (calls.length === 0) return;
  await sql`
    insert into saved_query_endpoint_calls ${sql(
      calls.map((call) => ({ ...call })),
      'endpoint_id',
      'called_at',
      'status',
      'duration_ms',
      'rows',
      'cached',
      'format',
    )}`;
  for (const endpointId of new Set(calls.map((call) => call.endpoint_id))) {
    await sql`
      delete from saved_query_endpoint_calls
      where endpoint_id = ${endpointId} and id < (
        select id from saved_query_endpoint_calls where endpoint_id = ${endpointId}
        order by id desc offset ${CALLS_KEPT - 1} limit 1)`;
  }
}

/** The latest calls of an endpoint, newest first. */
export async function listEndpointCalls(sql: SqlLike, endpointId: string, limit: number): Promise<EndpointCallRow[]> {
  return sql<EndpointCallRow[]>`
    select called_at, status, duration_ms, rows, cached, format from saved_query_endpoint_calls
    where endpoint_id = ${endpointId} order by id desc limit ${limit}`;
}
