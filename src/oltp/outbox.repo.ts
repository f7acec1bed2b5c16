import type { FactInput, FactKind, FactRow } from '../core/fact.js';
import type { SqlLike } from './db.js';

/** Records a fact; call it with the transaction that makes the change. */
export async function recordFact(sql: SqlLike, fact: FactInput): Promise<void> {
  const { kind, projectId, ...payload } = fact;
  await sql`
    insert into outbox (project_id, kind, payload)
    values (${projectId}, ${kind}, ${sql.json(JSON.parse(JSON.stringify(payload)))})`;
}

type OutboxRow = { id: string; project_id: string; kind: FactKind; payload: Omit<FactInput, 'kind' | 'projectId'>; occurred_at: string };

/**
 * The batch to deliver next: a batch claimed earlier and not yet deleted (its delivery was
 * interrupted; it is redelivered with the same id, hence the same deduplication token), else up
 * to `limit` unclaimed facts in id order, claimed now under `batchId`.
 */
export async function claimOutboxBatch(sql: SqlLike, batchId: string, limit: number): Promise<{ batchId: string; facts: FactRow[] }> {
  const [unfinished] = await sql<{ batch_id: string }[]>`
    select batch_id from outbox where batch_id is not null order by id limit 1`;
  let rows: OutboxRow[];
  if (unfinished) {
    batchId = unfinished.batch_id;
    rows = await sql<OutboxRow[]>`
      select id, project_id, kind, payload, ${occurredAtUtc(sql)} from outbox where batch_id = ${batchId} order by id`;
  } else {
    rows = await sql<OutboxRow[]>`
      update outbox set batch_id = ${batchId}
      where id in (select id from outbox where batch_id is null order by id limit ${limit} for update skip locked)
      returning id, project_id, kind, payload, ${occurredAtUtc(sql)}`;
    rows.sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)));
  }
  return { batchId, facts: rows.map(toFactRow) };
}

/** occurred_at as UTC text with microseconds: a JS Date would drop them. */
const occurredAtUtc = (sql: SqlLike) => sql`to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as occurred_at`;

export async function deleteOutboxBatch(sql: SqlLike, batchId: string): Promise<void> {
  await sql`delete from outbox where batch_id = ${batchId}`;
}

function toFactRow(row: OutboxRow): FactRow {
  const p = row.payload;
  return {
    fact_id: String(row.id),
    project_id: row.project_id,
    kind: row.kind,
    occurred_at: row.occurred_at,
    feedback_id: p.feedbackId ?? null,
    user_id: p.userId ?? '',
    category: p.category ?? '',
    status: p.status ?? '',
    previous_status: p.previousStatus ?? '',
    merged_into_id: p.mergedIntoId ?? null,
    comment_id: p.commentId ?? null,
    is_admin: p.isAdmin ?? false,
    mrr: p.mrr ?? null,
    first_seen_at: p.firstSeenAt ?? null,
  };
}
