import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rollupMismatches } from '../../src/olap/tables/rollups.js';
import { createSql } from '../../src/oltp/db.js';
import { recordDeadLetters } from '../../src/oltp/dead-letters.repo.js';
import { sleep, until } from '../helpers/eventually.js';
import { createFeedback, createProject, createProjectOver, type TestProject } from '../helpers/factories.js';
import { assertDocumented } from '../helpers/openapi-validator.js';
import { useTestServer } from '../helpers/server.js';
import { call, serviceSetup, startService } from '../helpers/service.js';

const DAY = 24 * 3600 * 1000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Generous: a loaded machine. */
const WAIT_MS = 60_000;

const server = useTestServer();

/** The segment files of the embedded ingest log (DATA_DIR/ingest-log/segments) whose bytes contain `text`. */
async function ingestLogHolds(dataDir: string, text: string): Promise<string[]> {
  const dir = path.join(dataDir, 'ingest-log', 'segments');
  const names = (await readdir(dir)).filter((name) => name.endsWith('.seg'));
  const holding: string[] = [];
  for (const name of names) if ((await readFile(path.join(dir, name))).includes(text)) holding.push(name);
  return holding;
}

/** The text of an export (checked against the OpenAPI document like every response). */
async function download(path: string, bearer: string): Promise<string> {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${bearer}` } });
  const text = await response.text();
  assertDocumented({ method: 'GET', path, status: response.status, headers: response.headers, text });
  expect(response.status, text).toBe(200);
  return text;
}

/** Everything the read paths answer about the project, for before/after comparisons. */
async function readPaths(project: TestProject, window: { date_from: string; date_to: string }) {
  const bearer = project.account.adminToken;
  const q = `date_from=${window.date_from}&date_to=${window.date_to}`;
  const [summary, timeseries, breakdown] = await Promise.all([
    server.request('GET', `/api/v1/projects/${project.id}/metrics/summary?${q}`, { bearer }),
    server.request('GET', `/api/v1/projects/${project.id}/metrics/timeseries?${q}&interval=day&measures=event_count,unique_event_users`, {
      bearer,
    }),
    server.request('GET', `/api/v1/projects/${project.id}/metrics/breakdown?${q}&dimension=event_name`, { bearer }),
  ]);
  for (const response of [summary, timeseries, breakdown]) expect(response.status).toBe(200);
  const feedbacks = await download(`/api/v1/projects/${project.id}/exports/feedbacks?format=jsonl`, bearer);
  const users = await download(`/api/v1/projects/${project.id}/exports/users?format=jsonl`, bearer);
  const events = await download(`/api/v1/projects/${project.id}/exports/events?format=jsonl&${q}`, bearer);
  const lines = (text: string) =>
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return {
    summary: summary.body.measures,
    timeseries: timeseries.body.buckets.filter((b: { measures: { event_count: number } }) => b.measures.event_count > 0),
    breakdown: breakdown.body.rows,
    feedbacks: lines(feedbacks),
    users: lines(users),
    events: lines(events),
  };
}

async function relayed(project: { id: string }) {
  await until('the outbox to be relayed', WAIT_MS, async () => {
    const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from outbox where project_id = ${project.id}`;
    return row?.n === 0;
  });
}

async function finished(project: TestProject, erasureId: string) {
  return until('the erasure to finish', WAIT_MS, async () => {
    const response = await server.request('GET', `/api/v1/projects/${project.id}/erasures/${erasureId}`, {
      bearer: project.account.adminToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.status).not.toBe('failed');
    return response.body.status === 'done' ? response.body : undefined;
  });
}

describe('DELETE /projects/:id/users/:userId: erasure of an SDK user (GDPR Art. 17)', () => {
  it('removes the user from every read path: feedback, votes, total_mrr, comments, emails, metrics, exports, ClickHouse', async () => {
    const project = await createProject(server, { plan: 'team' });
    const key = { apiKey: project.apiKey };
    const erased = `erase-me-${randomUUID().slice(0, 8)}`;
    const kept = `keep-me-${randomUUID().slice(0, 8)}`;
    const email = `${erased}@example.com`;
    for (const [userId, mrr] of [
      [erased, 100],
      [kept, 50],
    ] as const) {
      expect((await server.request('POST', '/api/v1/users/register', { ...key, body: { userId, mrr } })).status).toBe(200);
    }
    const own = await createFeedback(server, project, { userId: erased, userEmail: email, title: 'Erased user’s idea' });
    const other = await createFeedback(server, project, { userId: kept, title: 'Kept user’s idea' });
    expect(
      (
        await server.request('POST', `/api/v1/feedbacks/${other.id}/votes`, {
          ...key,
          body: { userId: erased, email, notifyStatusChange: true },
        })
      ).status,
    ).toBe(200);
    expect((await server.request('POST', `/api/v1/feedbacks/${own.id}/votes`, { ...key, body: { userId: kept } })).status).toBe(200);
    for (const [userId, content] of [
      [erased, 'mine'],
      [kept, 'theirs'],
    ]) {
      expect((await server.request('POST', `/api/v1/feedbacks/${own.id}/comments`, { ...key, body: { userId, content } })).status).toBe(
        200,
      );
    }
    // Events on three days (two of them in the past, sent with their timestamps), predefined and custom.
    const now = Date.now();
    const events = [
      { eventName: 'feedback_list', userId: erased, timestamp: new Date(now - 2 * DAY).toISOString() },
      { eventName: 'clicked', userId: erased, timestamp: new Date(now - 2 * DAY).toISOString(), properties: { button: 'a' } },
      { eventName: 'feedback_list', userId: kept, timestamp: new Date(now - 2 * DAY).toISOString() },
      { eventName: 'feedback_detail', userId: erased, timestamp: new Date(now - DAY).toISOString() },
      { eventName: 'feedback_list', userId: erased },
      { eventName: 'feedback_list', userId: kept },
      { eventName: 'clicked', userId: kept },
    ];
    expect((await server.request('POST', '/api/v1/events/batch', { ...key, body: { events } })).status).toBe(200);
    // A status change emails the erased voter (Team plan): a delivery to their address.
    expect(
      (
        await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${other.id}`, {
          bearer: project.account.adminToken,
          body: { status: 'approved' },
        })
      ).status,
    ).toBe(200);
    // A changelog entry shipping their item: its announcement holds a snapshot of the item (their
    // id and address), and emails them as its submitter.
    const entry = await server.request('POST', `/api/v1/projects/${project.id}/changelog`, {
      bearer: project.account.adminToken,
      body: { title: 'Shipped', body: 'Yes.', linkedFeedbackIds: [own.id] },
    });
    expect(entry.status).toBe(200);
    const published = await server.request('POST', `/api/v1/projects/${project.id}/changelog/${entry.body.id}/publish`, {
      bearer: project.account.adminToken,
    });
    expect(published.status).toBe(200);
    await until('the email deliveries to the voter and submitter', WAIT_MS, async () => {
      const rows = await server.sql`select 1 from deliveries where project_id = ${project.id} and recipient = ${email}`;
      return rows.length === 2;
    });
    await relayed(project);

    const window = { date_from: dayOf(now - 3 * DAY), date_to: dayOf(now) };
    const before = await readPaths(project, window);
    expect(before.summary).toMatchObject({
      event_count: 7,
      unique_event_users: 2,
      sdk_users: 2,
      total_mrr: 150,
      vote_count: 4,
      feedback_count: 2,
      comment_count: 2,
    });
    expect(before.events.filter((e: { user_id: string }) => e.user_id === erased)).toHaveLength(4);
    expect(before.users.map((u: { user_id: string }) => u.user_id).sort()).toEqual([erased, kept].sort());
    expect(before.feedbacks.find((f: { id: string }) => f.id === other.id)).toMatchObject({ vote_count: 2, total_mrr: 150 });

    const requested = await server.request('DELETE', `/api/v1/projects/${project.id}/users/${encodeURIComponent(erased)}`, {
      bearer: project.account.adminToken,
    });
    expect(requested.status, JSON.stringify(requested.body)).toBe(202);
    expect(requested.headers.get('location')).toBe(`/api/v1/projects/${project.id}/erasures/${requested.body.id}`);
    expect(requested.body).toMatchObject({ project_id: project.id, user_id: erased, status: 'pending', step: 'postgres' });
    const again = await server.request('DELETE', `/api/v1/projects/${project.id}/users/${encodeURIComponent(erased)}`, {
      bearer: project.account.adminToken,
    });
    if (again.body.status !== 'done') expect(again.body.id).toBe(requested.body.id); // an open erasure is answered, not doubled
    const done = await finished(project, requested.body.id);
    expect(done).toMatchObject({
      user_id: null,
      step: 'done',
      completed_at: expect.any(String),
      summary: {
        votes_deleted: 2,
        feedbacks_anonymized: 1,
        comments_anonymized: 1,
        sdk_user_deleted: true,
        deliveries_deleted: 2,
        notifications_scrubbed: 1,
        event_days: 3,
      },
    });

    const after = await readPaths(project, window);
    // Metrics: the erased user's events, votes and MRR are gone; their item and comment stay.
    expect(after.summary).toMatchObject({
      event_count: 3,
      unique_event_users: 1,
      sdk_users: 1,
      total_mrr: 50,
      vote_count: 2,
      feedback_count: 2,
      comment_count: 2,
    });
    expect(after.timeseries.map((b: { measures: unknown }) => b.measures)).toEqual([
      { event_count: 1, unique_event_users: 1 },
      { event_count: 2, unique_event_users: 1 },
    ]);
    expect(after.breakdown).toEqual(
      expect.arrayContaining([
        { key: 'feedback_list', measures: { event_count: 2, unique_event_users: 1 } },
        { key: 'clicked', measures: { event_count: 1, unique_event_users: 1 } },
      ]),
    );
    expect(after.breakdown).toHaveLength(2);
    // Exports.
    expect(after.events.map((e: { user_id: string }) => e.user_id)).toEqual([kept, kept, kept]);
    expect(after.users.map((u: { user_id: string }) => u.user_id)).toEqual([kept]);
    const ownAfter = after.feedbacks.find((f: { id: string }) => f.id === own.id);
    const anonymous = ownAfter.user_id as string;
    expect(anonymous).toMatch(/^erased-/);
    expect(ownAfter).toMatchObject({ user_email: null, vote_count: 1, total_mrr: 50 });
    expect(after.feedbacks.find((f: { id: string }) => f.id === other.id)).toMatchObject({ vote_count: 1, total_mrr: 50 });
    // The API's own reads.
    const listed = await server.request('GET', '/api/v1/feedbacks?includeMerged=true', { ...key, userId: erased });
    expect(listed.body.map((f: { has_voted: boolean }) => f.has_voted)).toEqual([false, false]);
    const comments = await server.request('GET', `/api/v1/feedbacks/${own.id}/comments`, key);
    expect(comments.body.map((c: { user_id: string }) => c.user_id)).toEqual([anonymous, kept]);
    // Nothing in PostgreSQL names them or their address.
    const [pg] = await server.sql<{ n: number }[]>`
      select ((select count(*) from votes where user_id = ${erased})
           + (select count(*) from sdk_users where user_id = ${erased})
           + (select count(*) from feedbacks where user_id = ${erased} or user_email = ${email})
           + (select count(*) from comments where user_id = ${erased})
           + (select count(*) from deliveries where recipient = ${email})
           + (select count(*) from notifications where payload::text like ${`%${erased}%`})
           + (select count(*) from erasures where user_id = ${erased}))::int as n`;
    expect(pg?.n).toBe(0);
    // ClickHouse: no event or fact names them; the rollups of the affected days are exact.
    const [ch] = await server.clickhouseRows<{ events: string; by_user: string; facts: string; anonymized: string }>(
      `SELECT (SELECT count() FROM events WHERE project_id = {p:UUID} AND user_id = {u:String}) AS events,
              (SELECT count() FROM events_by_user WHERE project_id = {p:UUID} AND user_id = {u:String}) AS by_user,
              (SELECT count() FROM facts WHERE project_id = {p:UUID} AND user_id = {u:String}) AS facts,
              (SELECT count() FROM facts WHERE project_id = {p:UUID} AND user_id = {a:String}) AS anonymized`,
      { p: project.id, u: erased, a: anonymous },
    );
    // Their feedback_created and comment_added facts stay, anonymized.
    expect(Object.values(ch ?? {}).map(Number)).toEqual([0, 0, 0, 2]);
    const target = { client: server.clickhouse };
    expect(await rollupMismatches(target, project.id, [dayOf(now - 2 * DAY), dayOf(now - DAY), dayOf(now)])).toBe(0);

    // Safe to run twice: erasing the same user again finds nothing more to change.
    const second = await server.request('DELETE', `/api/v1/projects/${project.id}/users/${encodeURIComponent(erased)}`, {
      bearer: project.account.adminToken,
    });
    expect(second.status).toBe(202);
    expect(second.body.id).not.toBe(requested.body.id);
    const secondDone = await finished(project, second.body.id);
    expect(secondDone.summary).toMatchObject({
      votes_deleted: 0,
      feedbacks_anonymized: 0,
      comments_anonymized: 0,
      sdk_user_deleted: false,
      event_days: 0,
    });
    expect(await readPaths(project, window)).toEqual(after);
  });

  it('leaves no trace of the user in dead letters or in the text of ClickHouse mutations once done', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const erased = `traced-${randomUUID()}@example.com`;
    const kept = `kept-${randomUUID()}`;
    const tracked = await server.request('POST', '/api/v1/events/batch', {
      apiKey: project.apiKey,
      body: {
        events: [
          { eventName: 'open', userId: erased },
          { eventName: 'open', userId: kept },
        ],
      },
    });
    expect(tracked.status).toBe(200);
    await server.eventsVisible();
    expect(await ingestLogHolds(server.dataDir, erased), 'the log holds the shipped events before the erasure').not.toEqual([]);
    // Rows ClickHouse refused, as the batch writer records them: the payload is the row's JSON.
    const letter = (userId: string, kind: 'event' | 'fact') => ({
      kind,
      projectId: project.id,
      rowKey: `${project.id}:${randomUUID()}`,
      payload: JSON.stringify({ project_id: project.id, event_id: randomUUID(), user_id: userId, properties: { email: userId } }),
      errorCode: '25',
      errorName: 'CANNOT_PARSE_ESCAPE_SEQUENCE',
      error: 'refused',
    });
    await recordDeadLetters(server.sql, [letter(erased, 'event'), letter(erased, 'fact'), letter(kept, 'event')]);

    const requested = await server.request('DELETE', `/api/v1/projects/${project.id}/users/${encodeURIComponent(erased)}`, {
      bearer: project.account.adminToken,
    });
    expect(requested.status).toBe(202);
    await finished(project, requested.body.id);

    const letters = await server.sql<{ payload: string }[]>`select payload from dead_letters where project_id = ${project.id}`;
    expect(letters.map((l) => JSON.parse(l.payload).user_id)).toEqual([kept]);
    const operatorView = await server.request('GET', `/api/v1/admin/dead-letters?project_id=${project.id}`, {
      bearer: server.operatorToken,
    });
    expect(JSON.stringify(operatorView.body)).not.toContain(erased);
    const mutations = await server.clickhouseRows<{ command: string }>('SELECT command FROM system.mutations');
    expect(mutations.length).toBeGreaterThan(0);
    expect(mutations.filter((m) => m.command.includes(erased) || m.command.includes(encodeURIComponent(erased)))).toEqual([]);
    const events = await server.clickhouseRows<{ user_id: string }>('SELECT user_id FROM events WHERE project_id = {p:UUID}', {
      p: project.id,
    });
    expect(events).toEqual([{ user_id: kept }]);
    // Nor in the raw copies of the local ingest log: its segments holding shipped events are gone.
    expect(await ingestLogHolds(server.dataDir, erased)).toEqual([]);
  });

  it('answers 404 for an unknown project or erasure, 403 for another account’s project, 401 without a token, 400 for an over-long user id', async () => {
    const project = await createProject(server);
    const stranger = await createProject(server);
    const bearer = project.account.adminToken;
    expect((await server.request('DELETE', `/api/v1/projects/${randomUUID()}/users/u1`, { bearer })).status).toBe(404);
    expect((await server.request('DELETE', `/api/v1/projects/${stranger.id}/users/u1`, { bearer })).status).toBe(403);
    expect((await server.request('DELETE', `/api/v1/projects/${project.id}/users/u1`)).status).toBe(401);
    const long = await server.request('DELETE', `/api/v1/projects/${project.id}/users/${'x'.repeat(256)}`, { bearer });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({
      error: true,
      reason: 'userId: must be at most 255 characters',
      message: 'userId: must be at most 255 characters',
    });
    expect((await server.request('GET', `/api/v1/projects/${project.id}/erasures/${randomUUID()}`, { bearer })).status).toBe(404);
    expect((await server.request('GET', `/api/v1/projects/${project.id}/erasures/not-a-uuid`, { bearer })).status).toBe(404);
    const theirs = await server.request('DELETE', `/api/v1/projects/${stranger.id}/users/u1`, { bearer: stranger.account.adminToken });
    expect(theirs.status).toBe(202);
    expect((await server.request('GET', `/api/v1/projects/${project.id}/erasures/${theirs.body.id}`, { bearer })).status).toBe(404);
  });
});

describe('an erasure interrupted by a kill resumes after the restart', () => {
  it('SIGKILL while the erasure waits between its PostgreSQL and ClickHouse steps: the restarted service finishes it', {
    timeout: 180_000,
  }, async () => {
    const setup = await serviceSetup();
    const sql = createSql(setup.env.DATABASE_URL as string, { max: 2 });
    try {
      let proc = await startService(setup);
      const project = await createProjectOver(setup.base, setup.operatorToken);
      const erased = 'kill-user';
      const key = { apiKey: project.apiKey };
      expect((await call(setup.base, 'POST', '/api/v1/users/register', { ...key, body: { userId: erased, mrr: 10 } })).status).toBe(200);
      const feedback = await call(setup.base, 'POST', '/api/v1/feedbacks', {
        ...key,
        body: { title: 'Kill me softly', description: 'x', category: 'other', userId: erased },
      });
      expect(feedback.status).toBe(200);
      const batch = [erased, erased, 'survivor'].map((userId) => ({ eventName: 'feedback_list', userId }));
      expect((await call(setup.base, 'POST', '/api/v1/events/batch', { ...key, body: { events: batch } })).status).toBe(200);
      await until(
        'the outbox to be relayed',
        WAIT_MS,
        async () => (await sql`select 1 from outbox where project_id = ${project.id}`).length === 0,
      );

      // A fact of the user still on its way: committed in the outbox, and row-locked here so the
      // relay (which skips locked rows) cannot move it yet. The erasure must wait for it.
      const [pending] = await sql<{ id: string }[]>`
        insert into outbox (project_id, kind, payload)
        values (${project.id}, 'sdk_user_registered', ${sql.json({ userId: erased, mrr: 20, firstSeenAt: new Date().toISOString() })})
        returning id`;
      const holder = await sql.reserve();
      await holder`begin`;
      await holder`select 1 from outbox where id = ${pending?.id ?? '0'} for update`;

      // The owner's token, through the operator's tools (the service's database holds one account).
      const accounts = (await call(setup.base, 'GET', '/api/v1/admin/accounts', { bearer: setup.operatorToken })).body.accounts;
      expect(accounts).toHaveLength(1);
      const tokens = await call(setup.base, 'POST', `/api/v1/admin/accounts/${accounts[0].id}/tokens`, { bearer: setup.operatorToken });
      const bearer = tokens.body.admin_token as string;
      const requested = await call(setup.base, 'DELETE', `/api/v1/projects/${project.id}/users/${erased}`, { bearer });
      expect(requested.status).toBe(202);
      const erasureUrl = `/api/v1/projects/${project.id}/erasures/${requested.body.id}`;
      const halfway = await until('the PostgreSQL step', WAIT_MS, async () => {
        const state = await call(setup.base, 'GET', erasureUrl, { bearer });
        return state.body.step === 'settle' ? state.body : undefined;
      });
      expect(halfway.summary).toMatchObject({ sdk_user_deleted: true, votes_deleted: 1, feedbacks_anonymized: 1 });
      await sleep(1_500); // fixed on purpose: time in which a wrong erasure would go on while the fact is held
      expect((await call(setup.base, 'GET', erasureUrl, { bearer })).body.step).toBe('settle');

      proc.signal('SIGKILL');
      expect((await proc.waitForExit(15_000)).signal).toBe('SIGKILL');
      await holder`rollback`;
      holder.release();

      proc = await startService(setup);
      const done = await until('the resumed erasure', 90_000, async () => {
        const state = await call(setup.base, 'GET', erasureUrl, { bearer });
        expect(state.body.status).not.toBe('failed');
        return state.body.status === 'done' ? state.body : undefined;
      });
      expect(done).toMatchObject({ user_id: null, step: 'done', summary: { event_days: 1 } });
      const left = await call(setup.base, 'POST', '/api/v1/admin/sql', {
        bearer: setup.operatorToken,
        body: {
          query: `SELECT (SELECT count() FROM events WHERE project_id = {p:UUID} AND user_id = {u:String}) AS events,
                         (SELECT count() FROM facts WHERE project_id = {p:UUID} AND user_id = {u:String}) AS facts,
                         (SELECT count() FROM events WHERE project_id = {p:UUID}) AS all_events,
                         (SELECT sum(events) FROM events_daily WHERE project_id = {p:UUID}) AS rolled_up`,
          params: { p: project.id, u: erased },
        },
      });
      expect(left.status).toBe(200);
      // The held fact reached ClickHouse after the restart and was erased with the others.
      const counts = Object.fromEntries(Object.entries(left.body.rows[0] as Record<string, unknown>).map(([k, v]) => [k, Number(v)]));
      expect(counts).toEqual({ events: 0, facts: 0, all_events: 1, rolled_up: 1 });
      const items = await call(setup.base, 'GET', '/api/v1/feedbacks', key);
      expect(items.body[0].user_id).toMatch(/^erased-/);
      proc.signal('SIGTERM');
      await proc.waitForExit(30_000);
    } finally {
      await sql.end();
    }
  });
});
