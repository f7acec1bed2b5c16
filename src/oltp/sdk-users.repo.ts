import type { Sql, SqlLike } from './db.js';
import { recordFact } from './outbox.repo.js';

export type SdkUserRow = {
  id: string;
  user_id: string;
  mrr: number | null;
  /** Private: the owner's and the user's own (017_sdk_user_profile.sql). */
  email: string | null;
  name: string | null;
  first_seen_at: Date;
  last_seen_at: Date;
};

/**
 * What a registration says besides the user id. `email` and `name` replace the stored ones only
 * when given (null clears): a SPEC registration (`{ userId, mrr }`) never names them, and must not
 * clear what an SDK that does sent before.
 */
export type SdkUserRegistration = {
  userId: string;
  mrr?: number | null | undefined;
  email?: string | null | undefined;
  name?: string | null | undefined;
};

/**
 * Registers a user of the client app, or refreshes last_seen_at of a known one. The stored MRR
 * becomes what was sent, so an omitted `mrr` clears it as an explicit null does: the origin's
 * server did so (`existingUser.mrr = dto.mrr`) and its Swift SDK's `clearUserPayment` relies on it.
 * Each call is a fact (with the MRR after it), so revenue can be read at any point in time.
 */
export async function registerSdkUser(sql: Sql, projectId: string, input: SdkUserRegistration): Promise<SdkUserRow> {
  const setsEmail = input.email !== undefined;
  const setsName = input.name !== undefined;
  return sql.begin(async (tx) => {
    const [row] = await tx<SdkUserRow[]>`
      insert into sdk_users (project_id, user_id, mrr, email, name)
      values (${projectId}, ${input.userId}, ${input.mrr ?? null}, ${input.email ?? null}, ${input.name ?? null})
      on conflict (project_id, user_id) do update set
        last_seen_at = greatest(now(), sdk_users.last_seen_at),
        mrr = excluded.mrr,
        email = case when ${setsEmail} then excluded.email else sdk_users.email end,
        name = case when ${setsName} then excluded.name else sdk_users.name end
      returning id, user_id, mrr, email, name, first_seen_at, last_seen_at,
        -- with its microseconds, which a JS Date would drop
        to_char(first_seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as first_seen_text`;
    const { first_seen_text: firstSeenAt, ...user } = row as SdkUserRow & { first_seen_text: string };
    await recordFact(tx, {
      kind: 'sdk_user_registered',
      projectId,
      userId: user.user_id,
      mrr: user.mrr,
      firstSeenAt,
    });
    return user;
  });
}

export const SDK_USER_SORTS = ['mrr', 'first_seen', 'last_seen'] as const;
export type SdkUserSort = (typeof SDK_USER_SORTS)[number];
export const SORT_ORDERS = ['asc', 'desc'] as const;
export type SortOrder = (typeof SORT_ORDERS)[number];

export type SdkUserPage = { users: SdkUserRow[]; total: number };

/** The sort key of each order. Users without MRR come last in both directions: unknown is not zero. */
function sdkUserOrder(sql: SqlLike, sort: SdkUserSort, order: SortOrder) {
  const direction = order === 'asc' ? sql`asc` : sql`desc`;
  switch (sort) {
    case 'mrr':
      return sql`mrr ${direction} nulls last, user_id asc`;
    case 'first_seen':
      return sql`first_seen_at ${direction}, user_id asc`;
    case 'last_seen':
      return sql`last_seen_at ${direction}, user_id asc`;
  }
}

/**
 * Users whose id, email or name contains `q`, in any letter case: `ilike` with the term's own
 * wildcards escaped, so `50%` or `a_b` find those characters. The term travels as a parameter.
 */
function userMatches(sql: SqlLike, q: string | undefined) {
  if (q === undefined || q === '') return sql``;
  const pattern = `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql`and (user_id ilike ${pattern} escape '\\' or email ilike ${pattern} escape '\\' or name ilike ${pattern} escape '\\')`;
}

/**
 * One page of a project's SDK users (those matching `q`, when given) and how many match in all.
 * last_seen_at is the last call of POST /users/register for the user (tracked events do not move
 * it: the dashboard names the column "Last registered").
 */
export async function listSdkUsers(
  sql: SqlLike,
  projectId: string,
  page: { sort: SdkUserSort; order: SortOrder; limit: number; offset: number; q?: string | undefined },
): Promise<SdkUserPage> {
  const [users, [counted]] = await Promise.all([
    sql<SdkUserRow[]>`
      select id, user_id, mrr, email, name, first_seen_at, last_seen_at
      from sdk_users
      where project_id = ${projectId} ${userMatches(sql, page.q)}
      order by ${sdkUserOrder(sql, page.sort, page.order)}
      limit ${page.limit} offset ${page.offset}`,
    sql<{ total: number }[]>`
      select count(*)::int as total from sdk_users where project_id = ${projectId} ${userMatches(sql, page.q)}`,
  ]);
  return { users, total: counted?.total ?? 0 };
}

/** One SDK user of the project, or null when the app never registered it. */
export async function findSdkUser(sql: SqlLike, projectId: string, userId: string): Promise<SdkUserRow | null> {
  const [row] = await sql<SdkUserRow[]>`
    select id, user_id, mrr, email, name, first_seen_at, last_seen_at
    from sdk_users
    where project_id = ${projectId} and user_id = ${userId}`;
  return row ?? null;
}
