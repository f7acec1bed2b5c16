import { type ClickHouseTarget, DATA_TABLES, type DataTable, mutate } from '../mutations.js';

/**
 * The ClickHouse side of erasures and project deletions: one function per statement, {name:Type}
 * parameters only. Deletions are mutations (`ALTER TABLE … DELETE`) run with mutations_sync, so
 * the rows are gone from disk, not only hidden, when the function returns, and every function can
 * run again with the same effect (safe to repeat after a crash).
 *
 * On a cluster (CLICKHOUSE_CLUSTER) the rows live in the `<table>_local` tables of every shard;
 * mutations go to those, ON CLUSTER. The rollup rebuild inserts into the rollup tables directly and
 * so needs a single server (or chDB): on a cluster it is refused (docs/data-rights.md). The
 * rollup rebuild itself is in ../tables/rollups.ts: the ingest writer repairs rollups with it too.
 */

/** UTC days on which the user has events: their rollup rows are rebuilt after the deletion. */
export async function eventDaysOfUser(target: ClickHouseTarget, projectId: string, userId: string): Promise<string[]> {
  const result = await target.client.query({
    query: `SELECT DISTINCT toString(toDate(created_at, 'UTC')) AS day FROM events
            WHERE project_id = {projectId:UUID} AND user_id = {userId:String} ORDER BY day`,
    query_params: { projectId, userId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ day: string }>()).map((row) => row.day);
}

/**
 * The user id as the mutations match it: ClickHouse's sipHash128 of it, in hex. ClickHouse keeps
 * the text of every mutation (`system.mutations`, with the parameters substituted) after it is
 * done, so a mutation that named the user would keep the id an erasure removes. Matching on the
 * hash keeps it out: the text carries 32 hex digits that only someone holding the id can tie to
 * it. The hash is computed by a SELECT, which ClickHouse does not keep (chDB writes no query log;
 * on a server, query_log is the operator's to configure: docs/data-rights.md). Two user ids of
 * one project with the same 128-bit hash are not a practical concern.
 */
export async function userIdHash(target: ClickHouseTarget, userId: string): Promise<string> {
  const result = await target.client.query({
    query: 'SELECT hex(sipHash128({userId:String})) AS hash',
    query_params: { userId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ hash: string }>();
  if (!row) throw new Error('ClickHouse did not hash the user id');
  return row.hash;
}

/** The condition of a mutation on one user's rows: the project and the hash of the user id. */
const USER_ROWS = 'project_id = {projectId:UUID} AND hex(sipHash128(user_id)) = {userHash:String}';

/**
 * Deletes every event of the user in the project, from `events` and from its user-ordered copy
 * `events_by_user` (sql/clickhouse/009), which the insights read. Both are mutations of whole
 * rows (not lightweight deletes), so nothing of the user stays hidden in a part.
 */
export async function deleteUserEvents(target: ClickHouseTarget, projectId: string, userId: string): Promise<void> {
  const userHash = await userIdHash(target, userId);
  for (const table of ['events', 'events_by_user'] as const)
    await mutate(target, table, `DELETE WHERE ${USER_ROWS}`, { projectId, userHash });
}

/** Fact kinds that are the user's own doing and go with them; the others are anonymized. */
export const ERASED_FACT_KINDS = ['vote_added', 'vote_removed', 'sdk_user_registered'] as const;

/**
 * The user's facts: their votes and registrations (MRR) are deleted, as they are in PostgreSQL;
 * the facts of the feedback items and comments they wrote, which stay on the board, are
 * attributed to the erasure's anonymous id, as in PostgreSQL. user_id is not in the facts' sort
 * key, so it can be updated in place.
 */
export async function eraseUserFacts(target: ClickHouseTarget, projectId: string, userId: string, anonymousId: string): Promise<void> {
  const userHash = await userIdHash(target, userId);
  await mutate(target, 'facts', `DELETE WHERE ${USER_ROWS} AND kind IN {kinds:Array(String)}`, {
    projectId,
    userHash,
    kinds: [...ERASED_FACT_KINDS],
  });
  await mutate(target, 'facts', `UPDATE user_id = {anonymousId:String} WHERE ${USER_ROWS}`, { projectId, userHash, anonymousId });
}

/** Deletes every row of the project from the events, their user-ordered copy, the facts and both rollups. */
export async function deleteProjectData(target: ClickHouseTarget, projectId: string): Promise<void> {
  for (const table of DATA_TABLES) await mutate(target, table, 'DELETE WHERE project_id = {projectId:UUID}', { projectId });
}

/** Rows of the project left in each table (0 everywhere after deleteProjectData). */
export async function projectRowCounts(target: ClickHouseTarget, projectId: string): Promise<Record<DataTable, number>> {
  const result = await target.client.query({
    query: `SELECT
      (SELECT count() FROM events WHERE project_id = {projectId:UUID}) AS events,
      (SELECT count() FROM events_by_user WHERE project_id = {projectId:UUID}) AS events_by_user,
      (SELECT count() FROM facts WHERE project_id = {projectId:UUID}) AS facts,
      (SELECT count() FROM events_daily WHERE project_id = {projectId:UUID}) AS events_daily,
      (SELECT count() FROM events_hourly WHERE project_id = {projectId:UUID}) AS events_hourly`,
    query_params: { projectId },
    format: 'JSONEachRow',
    clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
  });
  const [row] = await result.json<Record<DataTable, number>>();
  return row ?? { events: 0, events_by_user: 0, facts: 0, events_daily: 0, events_hourly: 0 };
}
