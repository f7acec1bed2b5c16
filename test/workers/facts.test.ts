import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import { describe, expect, it, vi } from 'vitest';
import type { FactKind, FactRow } from '../../src/core/fact.js';
import { insertFacts } from '../../src/olap/tables/facts.table.js';
import { claimOutboxBatch, deleteOutboxBatch } from '../../src/oltp/outbox.repo.js';
import { factsJobId } from '../../src/workers/runner.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { eventually, redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';

const withRedis = await redisAvailable();

/** A row of ClickHouse `facts` as read back (ids and times as text, so nothing is rounded). */
type StoredFact = Omit<FactRow, 'project_id'>;

/** What a fact says, without its id and times (checked separately). */
type FactContent = Omit<StoredFact, 'fact_id' | 'first_seen_at' | 'occurred_at'>;

const FACTS_QUERY = `
  SELECT toString(fact_id) AS fact_id, kind, toString(feedback_id) AS feedback_id, user_id, category, status,
         previous_status, toString(merged_into_id) AS merged_into_id, toString(comment_id) AS comment_id,
         is_admin, mrr, toString(first_seen_at) AS first_seen_at, toString(occurred_at) AS occurred_at
  FROM facts
  WHERE project_id = {p:UUID}
  ORDER BY toUInt64(fact_id)`; // numerically: the alias fact_id above is text

/** The expected content of one fact: every column the kind leaves unset is empty/null/false. */
function fact(kind: FactKind, fields: Partial<FactContent> = {}): FactContent {
  return {
    kind,
    feedback_id: null,
    user_id: '',
    category: '',
    status: '',
    previous_status: '',
    merged_into_id: null,
    comment_id: null,
    is_admin: false,
    mrr: null,
    ...fields,
  };
}

const content = ({ fact_id: _id, first_seen_at: _first, occurred_at: _at, ...rest }: StoredFact): FactContent => rest;

/** ClickHouse DateTime64 text ('2025-01-02 03:04:05.123000', UTC) as an ISO string in ms. */
const isoOf = (clickhouseTime: string) => new Date(`${clickhouseTime.replace(' ', 'T')}Z`).toISOString();

describe.each([
  { mode: 'embedded (relay inserts directly)', redis: false },
  { mode: 'BullMQ on Redis (relay queues `facts` jobs)', redis: true },
])('OLTP facts into ClickHouse, $mode', ({ redis }) => {
  const server = useTestServer({ redis });

  const readFacts = (projectId: string) => server.clickhouseRows<StoredFact>(FACTS_QUERY, { p: projectId });

  async function outboxCount(): Promise<number> {
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
    return row?.n ?? -1;
  }

  /** True when nothing is left to deliver: the outbox is empty and (BullMQ) no job is pending. */
  async function settled(): Promise<boolean> {
    if ((await outboxCount()) !== 0) return false;
    const queue = server.services.queue;
    if (!queue) return true;
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children');
    return Object.values(counts).every((n) => n === 0);
  }

  /**
   * The project's facts once at least `count` are in ClickHouse and nothing is left in flight,
   * read again after that, so a fact that should not exist would be seen too.
   */
  async function settledFacts(projectId: string, count: number): Promise<StoredFact[]> {
    await eventually(`${count} facts of ${projectId} in ClickHouse, outbox and queue empty`, 15_000, async () => {
      const rows = await readFacts(projectId);
      return rows.length >= count && (await settled());
    });
    if (server.services.queue) expect(await server.services.queue.getJobCounts('failed')).toEqual({ failed: 0 });
    return readFacts(projectId);
  }

  function expectWellFormed(rows: StoredFact[]) {
    const ids = rows.map((row) => BigInt(row.fact_id));
    expect(new Set(ids).size, 'fact_id unique').toBe(ids.length);
    for (let i = 1; i < rows.length; i++) {
      // Later facts (by outbox id) never carry an earlier clock.
      expect(rows[i]!.occurred_at >= rows[i - 1]!.occurred_at, `occurred_at of fact ${i}`).toBe(true);
    }
  }

  async function api(project: TestProject, method: string, path: string, body: unknown, status = 200) {
    const response = await server.request(method, `/api/v1${path}`, { apiKey: project.apiKey, body });
    expect(response.status, `${method} ${path} ${JSON.stringify(response.body)}`).toBe(status);
    return response.body;
  }

  async function admin(project: TestProject, method: string, path: string, body: unknown, status = 200) {
    const response = await server.request(method, `/api/v1/projects/${project.id}${path}`, {
      bearer: project.account.adminToken,
      body,
    });
    expect(response.status, `${method} ${path} ${JSON.stringify(response.body)}`).toBe(status);
    return response.body;
  }

  it.skipIf(redis && !withRedis)('every change over HTTP becomes one fact, with exact columns, in the order of the API calls', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const expected: FactContent[] = [];
    const firstSeen = new Map<number, string>(); // index in `expected` -> first_seen_at of the response

    // Feedback with the creator's vote.
    const f1 = await createFeedback(server, project, {
      userId: 'alice',
      userEmail: 'alice@example.com',
      category: 'bug_report',
    });
    expect(f1.user_email).toBe('alice@example.com');
    expected.push(
      fact('feedback_created', { feedback_id: f1.id, user_id: 'alice', category: 'bug_report', status: 'pending' }),
      fact('vote_added', { feedback_id: f1.id, user_id: 'alice' }),
    );

    // Votes, an unvote, and an unvote of a vote that is not there (no change, no fact).
    for (const user of ['bob', 'carol', 'dan']) {
      await api(project, 'POST', `/feedbacks/${f1.id}/votes`, { userId: user, email: `${user}@example.com` });
      expected.push(fact('vote_added', { feedback_id: f1.id, user_id: user }));
    }
    const unvoted = await api(project, 'DELETE', `/feedbacks/${f1.id}/votes`, { userId: 'carol' });
    expect(unvoted).toEqual({ feedback_id: f1.id, vote_count: 3, has_voted: false, success: true });
    expected.push(fact('vote_removed', { feedback_id: f1.id, user_id: 'carol' }));
    await api(project, 'DELETE', `/feedbacks/${f1.id}/votes`, { userId: 'carol' });

    // Comments, by a user and as admin.
    const c1 = await api(project, 'POST', `/feedbacks/${f1.id}/comments`, { content: 'Me too', userId: 'bob' });
    expected.push(fact('comment_added', { feedback_id: f1.id, user_id: 'bob', comment_id: c1.id, is_admin: false }));
    const c2 = await api(project, 'POST', `/feedbacks/${f1.id}/comments`, {
      content: 'On our list',
      userId: 'support',
      isAdmin: true,
    });
    expected.push(fact('comment_added', { feedback_id: f1.id, user_id: 'support', comment_id: c2.id, is_admin: true }));

    // SDK users: each call is a fact with the MRR after it (omitted keeps it, null clears it).
    const registrations: [string, Record<string, unknown>, number | null][] = [
      ['erin', { userId: 'erin', mrr: 10 }, 10],
      ['erin', { userId: 'erin', mrr: 25.5 }, 25.5],
      ['erin', { userId: 'erin' }, null],
      ['erin', { userId: 'erin', mrr: 25.5 }, 25.5],
      ['erin', { userId: 'erin', mrr: null }, null],
      ['erin', { user_id: 'erin', mrr: 0 }, 0],
      ['fay', { userId: 'fay' }, null],
      ['gus', { userId: 'gus', mrr: null }, null],
    ];
    const firstSeenOfUser = new Map<string, string>();
    for (const [user, body, mrr] of registrations) {
      const registered = await api(project, 'POST', '/users/register', body);
      expect(registered.mrr).toBe(mrr);
      // The first registration fixes first_seen_at; later ones keep it.
      expect(registered.first_seen_at).toBe(firstSeenOfUser.get(user) ?? registered.first_seen_at);
      firstSeenOfUser.set(user, registered.first_seen_at);
      firstSeen.set(expected.length, registered.first_seen_at);
      expected.push(fact('sdk_user_registered', { user_id: user, mrr }));
    }

    // Status changes (a PATCH that keeps the status changes nothing: no fact).
    await admin(project, 'PATCH', `/feedbacks/${f1.id}`, { status: 'approved' });
    expected.push(fact('feedback_status_changed', { feedback_id: f1.id, status: 'approved', previous_status: 'pending' }));
    await admin(project, 'PATCH', `/feedbacks/${f1.id}`, { status: 'in_progress' });
    expected.push(fact('feedback_status_changed', { feedback_id: f1.id, status: 'in_progress', previous_status: 'approved' }));
    await admin(project, 'PATCH', `/feedbacks/${f1.id}`, { status: 'in_progress' });

    // A second item, voted on, then merged into the first.
    const f2 = await createFeedback(server, project, { userId: 'hal', category: 'improvement' });
    expected.push(
      fact('feedback_created', { feedback_id: f2.id, user_id: 'hal', category: 'improvement', status: 'pending' }),
      fact('vote_added', { feedback_id: f2.id, user_id: 'hal' }),
    );
    await api(project, 'POST', `/feedbacks/${f2.id}/votes`, { userId: 'bob' });
    expected.push(fact('vote_added', { feedback_id: f2.id, user_id: 'bob' }));
    const merged = await admin(project, 'POST', `/feedbacks/${f2.id}/merge`, { intoId: f1.id });
    expect(merged.merged_into_id).toBe(f1.id);
    expected.push(fact('feedback_merged', { feedback_id: f2.id, merged_into_id: f1.id }));
    await admin(project, 'PATCH', `/feedbacks/${f1.id}`, { status: 'completed' });
    expected.push(fact('feedback_status_changed', { feedback_id: f1.id, status: 'completed', previous_status: 'in_progress' }));

    const rows = await settledFacts(project.id, expected.length);
    expect(rows.map(content)).toEqual(expected);
    expectWellFormed(rows);
    rows.forEach((row, i) => {
      const first = firstSeen.get(i);
      if (first === undefined) expect(row.first_seen_at, `first_seen_at of fact ${i}`).toBeNull();
      // The answer carries whole seconds (RFC 3339, as the origin did); the fact keeps the finer time.
      else expect(isoOf(row.first_seen_at ?? '').replace(/\.\d+Z$/, 'Z'), `first_seen_at of fact ${i}`).toBe(first);
    });
    // Per entity, the facts keep the order of the calls too (implied above; said explicitly).
    for (const id of [f1.id, f2.id]) {
      expect(rows.filter((row) => row.feedback_id === id).map(content)).toEqual(expected.filter((row) => row.feedback_id === id));
    }
    expect(await outboxCount()).toBe(0);
  });

  it.skipIf(redis && !withRedis)('rejected writes (409, 403, 400) record no fact', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const feedback = await createFeedback(server, project, { userId: 'ivy' });
    const expected: FactContent[] = [
      fact('feedback_created', { feedback_id: feedback.id, user_id: 'ivy', category: 'feature_request', status: 'pending' }),
      fact('vote_added', { feedback_id: feedback.id, user_id: 'ivy' }),
    ];
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, { userId: 'jay' });
    expected.push(fact('vote_added', { feedback_id: feedback.id, user_id: 'jay' }));

    // 409: a second vote, by a voter and by the creator.
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, { userId: 'jay' }, 409);
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, { userId: 'ivy' }, 409);
    // 400: bad bodies on every fact-recording operation.
    await api(project, 'POST', '/feedbacks', { title: 'x', description: 'y', category: 'nope', userId: 'u' }, 400);
    await api(project, 'POST', '/feedbacks', { title: 'x', description: 'y', category: 'other' }, 400);
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, {}, 400);
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, { userId: 'kim', email: 'not-an-email' }, 400);
    await api(project, 'DELETE', `/feedbacks/${feedback.id}/votes`, { userId: '' }, 400);
    await api(project, 'POST', `/feedbacks/${feedback.id}/comments`, { content: '', userId: 'kim' }, 400);
    await api(project, 'POST', `/feedbacks/${feedback.id}/comments`, { content: 'x'.repeat(2001), userId: 'kim' }, 400);
    await api(project, 'POST', '/users/register', { userId: 'kim', mrr: -1 }, 400);
    await api(project, 'POST', '/users/register', { userId: 'kim', mrr: '12' }, 400);
    await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'shipped' }, 400);
    await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { rejectionReason: 'no' }, 400);
    await admin(project, 'POST', `/feedbacks/${feedback.id}/merge`, { intoId: 'not-a-uuid' }, 400);
    await admin(project, 'POST', `/feedbacks/${feedback.id}/merge`, { intoId: feedback.id }, 400);
    // 404: nothing there to change.
    await api(project, 'POST', `/feedbacks/${randomUUID()}/votes`, { userId: 'kim' }, 404);
    await api(project, 'POST', `/feedbacks/${randomUUID()}/comments`, { content: 'hi', userId: 'kim' }, 404);
    // 403: voting closed on a rejected item (its status change is a fact; the refused vote is not).
    await admin(project, 'PATCH', `/feedbacks/${feedback.id}`, { status: 'rejected', rejectionReason: 'out of scope' });
    expected.push(fact('feedback_status_changed', { feedback_id: feedback.id, status: 'rejected', previous_status: 'pending' }));
    await api(project, 'POST', `/feedbacks/${feedback.id}/votes`, { userId: 'kim' }, 403);

    // 403: an archived project takes no writes to feedback.
    const archived = await createProject(server, { plan: 'pro' });
    const old = await createFeedback(server, archived, { userId: 'lee', category: 'other' });
    const archivedExpected: FactContent[] = [
      fact('feedback_created', { feedback_id: old.id, user_id: 'lee', category: 'other', status: 'pending' }),
      fact('vote_added', { feedback_id: old.id, user_id: 'lee' }),
    ];
    const patched = await server.request('PATCH', `/api/v1/projects/${archived.id}`, {
      bearer: archived.account.adminToken,
      body: { archived: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.archived).toBe(true);
    await api(archived, 'POST', '/feedbacks', { title: 't', description: 'd', category: 'other', userId: 'lee' }, 403);
    await api(archived, 'POST', `/feedbacks/${old.id}/votes`, { userId: 'max' }, 403);
    await api(archived, 'DELETE', `/feedbacks/${old.id}/votes`, { userId: 'lee' }, 403);
    await api(archived, 'POST', `/feedbacks/${old.id}/comments`, { content: 'hello', userId: 'max' }, 403);

    // Last, one valid write per project (registering users is allowed on archived projects): once
    // it is in ClickHouse and nothing is in flight, any fact of a refused write would be too.
    await api(project, 'POST', '/users/register', { userId: 'sentinel', mrr: 1 });
    expected.push(fact('sdk_user_registered', { user_id: 'sentinel', mrr: 1 }));
    await api(archived, 'POST', '/users/register', { userId: 'sentinel' });
    archivedExpected.push(fact('sdk_user_registered', { user_id: 'sentinel' }));

    const rows = await settledFacts(project.id, expected.length);
    expect(rows.map(content)).toEqual(expected);
    expectWellFormed(rows);
    const archivedRows = await settledFacts(archived.id, archivedExpected.length);
    expect(archivedRows.map(content)).toEqual(archivedExpected);
    expect(await outboxCount()).toBe(0);
  });

  /** Facts of a made-up project, put in the outbox by hand (as recordFact would). */
  async function insertOutboxFacts(tx: Parameters<typeof claimOutboxBatch>[0], projectId: string, users: string[]) {
    for (const userId of users) {
      await tx`
        insert into outbox (project_id, kind, payload)
        values (${projectId}, 'vote_added', ${tx.json({ feedbackId: randomUUID(), userId })})`;
    }
  }

  it.skipIf(redis && !withRedis)('delivering one claimed batch twice with its token stores it once', async () => {
    const projectId = randomUUID();
    let batch: { batchId: string; facts: FactRow[] } | undefined;
    // All in one transaction: the running relay cannot see (or claim) these facts meanwhile.
    await server.sql.begin(async (tx) => {
      await insertOutboxFacts(tx, projectId, ['u1', 'u2', 'u3']);
      batch = await claimOutboxBatch(tx, uuidv7(), 100);
      const token = `facts:${factsJobId(batch.batchId)}`;
      await insertFacts(server.clickhouse, batch.facts, token);
      await insertFacts(server.clickhouse, batch.facts, token);
      await deleteOutboxBatch(tx, batch.batchId);
    });
    expect(batch?.facts.map((f) => [f.project_id, f.kind, f.user_id])).toEqual([
      [projectId, 'vote_added', 'u1'],
      [projectId, 'vote_added', 'u2'],
      [projectId, 'vote_added', 'u3'],
    ]);
    const rows = await readFacts(projectId);
    expect(rows.map((row) => [row.fact_id, row.user_id])).toEqual(batch?.facts.map((f) => [f.fact_id, f.user_id]));

    // Control: the token is what deduplicates. The same rows under another batch's token are
    // another delivery and are stored again, so "stored once" above is not a coincidence.
    await insertFacts(server.clickhouse, batch?.facts ?? [], `facts:${factsJobId(uuidv7())}`);
    expect(await readFacts(projectId)).toHaveLength(6);
  });

  it.skipIf(redis && !withRedis)(
    'a batch delivered but not deleted (crash) is redelivered by the relay under the same batch id, stored once',
    async () => {
      const workers = server.workers;
      if (!workers) throw new Error('the test server runs no workers');
      await eventually('an idle outbox', 10_000, settled);
      const projectId = randomUUID();
      // Watches (and passes on) every insert into ClickHouse, to see the token of each delivery.
      const inserts = vi.spyOn(server.clickhouse, 'insert');
      const factTokens = () =>
        inserts.mock.calls
          .filter(([params]) => params.table === 'facts')
          .map(([params]) => params.clickhouse_settings?.insert_deduplication_token);
      let batch: { batchId: string; facts: FactRow[] } | undefined;
      await server.sql.begin(async (tx) => {
        await insertOutboxFacts(tx, projectId, ['v1', 'v2']);
        batch = await claimOutboxBatch(tx, uuidv7(), 100);
        // Delivered exactly as the relay of this mode would have stored it...
        await insertFacts(server.clickhouse, batch.facts, `facts:${factsJobId(batch.batchId)}`);
        // ...then the process dies: the claim is committed, the batch is not deleted.
      });
      expect(batch?.facts).toHaveLength(2);
      const [claimed] = await server.sql<{ batch_id: string; n: number }[]>`
        select batch_id::text, count(*)::int as n from outbox group by batch_id`;
      expect(claimed).toEqual({ batch_id: batch?.batchId, n: 2 });
      expect(await readFacts(projectId)).toHaveLength(2);

      // The running relay takes the unfinished batch up again (this drain, or its own timer).
      await workers.relay.drain();
      await eventually('the unfinished batch redelivered and deleted', 10_000, settled);
      const tokens = factTokens();
      inserts.mockRestore();
      // Two deliveries of the batch (the one before the crash, the relay's), one token: its id.
      const token = `facts:${factsJobId(batch?.batchId ?? '')}`;
      expect(tokens).toEqual([token, token]);
      const rows = await readFacts(projectId);
      expect(rows.map((row) => [row.fact_id, row.user_id])).toEqual(batch?.facts.map((f) => [f.fact_id, f.user_id]));
      expect(await outboxCount()).toBe(0);

      // And the relay goes on with new facts as usual afterwards.
      const project = await createProject(server, { plan: 'free' });
      await api(project, 'POST', '/users/register', { userId: 'after-crash', mrr: 3 });
      const after = await settledFacts(project.id, 1);
      expect(after.map(content)).toEqual([fact('sdk_user_registered', { user_id: 'after-crash', mrr: 3 })]);
      expect(await readFacts(projectId)).toHaveLength(2);
    },
  );
});
