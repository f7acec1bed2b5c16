import type { Sql } from './db.js';
import { recordFact } from './outbox.repo.js';

export type SdkUserRow = { id: string; user_id: string; mrr: number | null; first_seen_at: Date; last_seen_at: Date };

/**
 * Registers a user of the client app, or refreshes last_seen_at of a known one. An omitted `mrr`
 * keeps the stored figure; an explicit null clears it. Each call is a fact (with the MRR after
 * it), so revenue can be read at any point in time.
 */
export async function registerSdkUser(
  sql: Sql,
  projectId: string,
  input: { userId: string; mrr?: number | null | undefined },
): Promise<SdkUserRow> {
  const mrrGiven = input.mrr !== undefined;
  return sql.begin(async (tx) => {
    const [row] = await tx<SdkUserRow[]>`
      insert into sdk_users (project_id, user_id, mrr)
      values (${projectId}, ${input.userId}, ${input.mrr ?? null})
      on conflict (project_id, user_id) do update set
        last_seen_at = greatest(now(), sdk_users.last_seen_at),
        mrr = case when ${mrrGiven} then excluded.mrr else sdk_users.mrr end
      returning id, user_id, mrr, first_seen_at, last_seen_at,
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
