import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, MISSING_ID } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

/** Every error outside the metrics API has the SPEC 7.1 body `{ error: true, reason }`. */

const vote = (project: TestProject, feedbackId: string, body: unknown) =>
  server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey: project.apiKey, body });

const unvote = (project: TestProject, feedbackId: string, body: unknown) =>
  server.request('DELETE', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey: project.apiKey, body });

async function readFeedback(project: TestProject, feedbackId: string, userId?: string) {
  const response = await server.request('GET', `/api/v1/feedbacks/${feedbackId}`, {
    apiKey: project.apiKey,
    ...(userId === undefined ? {} : { userId }),
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function voteCount(project: TestProject, feedbackId: string): Promise<number> {
  return (await readFeedback(project, feedbackId)).vote_count;
}

/** Owner action (admin bearer token): set an item's status. */
async function setStatus(project: TestProject, feedbackId: string, status: string) {
  const response = await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${feedbackId}`, {
    bearer: project.account.adminToken,
    body: { status },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.status).toBe(status);
}

describe('POST /feedbacks/:id/votes', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'team' });
  });

  it('adds a vote and returns the vote response of SPEC 2.4 exactly: {feedback_id, vote_count, has_voted: true}, and success: true (docs/clients.md)', async () => {
    const item = await createFeedback(server, project, { userId: 'creator' });
    const response = await vote(project, item.id, { userId: 'voter-1' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
    expect(await voteCount(project, item.id)).toBe(2);
  });

  it('409 when the user has already voted, with no change to vote_count', async () => {
    const item = await createFeedback(server, project);
    expect((await vote(project, item.id, { userId: 'twice' })).status).toBe(200);
    expectError(await vote(project, item.id, { userId: 'twice' }), 409);
    expect(await voteCount(project, item.id)).toBe(2);
  });

  it('409 when the creator votes on their own item: the creator already has one vote', async () => {
    const item = await createFeedback(server, project, { userId: 'author' });
    expectError(await vote(project, item.id, { userId: 'author' }), 409);
    expect(await voteCount(project, item.id)).toBe(1);
  });

  it('accepts camelCase request fields (userId, email, notifyStatusChange)', async () => {
    const item = await createFeedback(server, project);
    const response = await vote(project, item.id, {
      userId: 'camel',
      email: 'camel@example.com',
      notifyStatusChange: true,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
    // Email and opt-in have no read API; the stored vote row shows they were decoded.
    const rows = await server.sql`
      select email, notify_status_change from votes where feedback_id = ${item.id} and user_id = 'camel'`;
    expect(rows.map((row) => ({ ...row }))).toEqual([{ email: 'camel@example.com', notify_status_change: true }]);
  });

  it('accepts snake_case request fields (user_id, email, notify_status_change)', async () => {
    const item = await createFeedback(server, project);
    const response = await vote(project, item.id, {
      user_id: 'snake',
      email: 'snake@example.com',
      notify_status_change: true,
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
    expect((await readFeedback(project, item.id, 'snake')).has_voted).toBe(true);
    const rows = await server.sql`
      select email, notify_status_change from votes where feedback_id = ${item.id} and user_id = 'snake'`;
    expect(rows.map((row) => ({ ...row }))).toEqual([{ email: 'snake@example.com', notify_status_change: true }]);
  });

  it('notifyStatusChange defaults to false', async () => {
    const item = await createFeedback(server, project);
    expect((await vote(project, item.id, { userId: 'quiet' })).status).toBe(200);
    const rows = await server.sql`
      select notify_status_change from votes where feedback_id = ${item.id} and user_id = 'quiet'`;
    expect(rows.map((row) => ({ ...row }))).toEqual([{ notify_status_change: false }]);
  });

  it.each([
    [{}, 'userId'],
    [{ userId: '' }, 'userId'],
    [{ user_id: '' }, 'userId'],
    [{ userId: 42 }, 'userId'],
    [{ userId: 'u', email: 'not-an-email' }, 'email'],
    [{ userId: 'u', notifyStatusChange: 'yes' }, 'notifyStatusChange'],
    [{ userId: 'u', notifyStatusChange: 1 }, 'notifyStatusChange'],
    [{ userId: 'u', notify_status_change: 'true' }, 'notifyStatusChange'],
  ])('400 naming the field for %j, and no vote is added', async (body, field) => {
    const item = await createFeedback(server, project);
    expectError(await vote(project, item.id, body), 400, field);
    expect(await voteCount(project, item.id)).toBe(1);
  });

  it('400 on a body that is not JSON', async () => {
    const item = await createFeedback(server, project);
    const response = await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, {
      apiKey: project.apiKey,
      rawBody: '{"userId":',
    });
    expectError(response, 400);
    expect(await voteCount(project, item.id)).toBe(1);
  });

  it.each(['approved', 'in_progress', 'testflight'])('voting is allowed when the status is %s', async (status) => {
    const item = await createFeedback(server, project);
    await setStatus(project, item.id, status);
    const response = await vote(project, item.id, { userId: 'fan' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
  });

  it.each(['completed', 'rejected'])('403 when the item is %s (voting blocked), with vote_count unchanged', async (status) => {
    const item = await createFeedback(server, project);
    await vote(project, item.id, { userId: 'early' });
    await setStatus(project, item.id, status);
    expectError(await vote(project, item.id, { userId: 'late' }), 403);
    const read = await readFeedback(project, item.id, 'late');
    expect(read).toMatchObject({ vote_count: 2, has_voted: false, status });
  });

  it('403 on a merged item, with vote_count unchanged', async () => {
    const source = await createFeedback(server, project, { title: 'duplicate' });
    const target = await createFeedback(server, project, { title: 'original' });
    const merge = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${source.id}/merge`, {
      bearer: project.account.adminToken,
      body: { intoId: target.id },
    });
    expect(merge.status, JSON.stringify(merge.body)).toBe(200);
    expect(merge.body.merged_into_id).toBe(target.id);
    const before = await readFeedback(project, source.id);
    const targetBefore = await readFeedback(project, target.id);
    expectError(await vote(project, source.id, { userId: 'newcomer' }), 403);
    expect((await readFeedback(project, source.id)).vote_count).toBe(before.vote_count);
    expect((await readFeedback(project, target.id)).vote_count).toBe(targetBefore.vote_count);
  });

  it('403 on an archived project, with vote_count unchanged', async () => {
    const archivedProject = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, archivedProject);
    const archive = await server.request('PATCH', `/api/v1/projects/${archivedProject.id}`, {
      bearer: archivedProject.account.adminToken,
      body: { archived: true },
    });
    expect(archive.status, JSON.stringify(archive.body)).toBe(200);
    expect(archive.body.archived).toBe(true);
    expectError(await vote(archivedProject, item.id, { userId: 'too-late' }), 403);
    const read = await readFeedback(archivedProject, item.id, 'too-late');
    expect(read).toMatchObject({ vote_count: 1, has_voted: false });
  });

  it('401 without an X-API-Key and with an invalid one', async () => {
    const item = await createFeedback(server, project);
    const path = `/api/v1/feedbacks/${item.id}/votes`;
    expectError(await server.request('POST', path, { body: { userId: 'anon' } }), 401);
    expectError(await server.request('POST', path, { apiKey: 'fbk_not_a_real_key', body: { userId: 'anon' } }), 401);
    expect(await voteCount(project, item.id)).toBe(1);
  });
});

describe('DELETE /feedbacks/:id/votes', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('removes the vote: the count decreases by 1 and the response has has_voted false', async () => {
    const item = await createFeedback(server, project);
    expect((await vote(project, item.id, { userId: 'fickle' })).body.vote_count).toBe(2);
    const response = await unvote(project, item.id, { userId: 'fickle' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 1, has_voted: false, success: true });
    expect(await voteCount(project, item.id)).toBe(1);
  });

  it('accepts snake_case user_id', async () => {
    const item = await createFeedback(server, project);
    await vote(project, item.id, { userId: 'snake-remover' });
    const response = await unvote(project, item.id, { user_id: 'snake-remover' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 1, has_voted: false, success: true });
  });

  it('the creator can remove their own vote: vote_count goes from 1 to 0', async () => {
    const item = await createFeedback(server, project, { userId: 'maker' });
    expect(item.vote_count).toBe(1);
    const response = await unvote(project, item.id, { userId: 'maker' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toEqual({ feedback_id: item.id, vote_count: 0, has_voted: false, success: true });
    expect(await readFeedback(project, item.id, 'maker')).toMatchObject({ vote_count: 0, has_voted: false });
  });

  it('removing a vote that does not exist is 200 with has_voted false and an unchanged count, never below 0', async () => {
    const item = await createFeedback(server, project, { userId: 'solo' });
    const stranger = await unvote(project, item.id, { userId: 'never-voted' });
    expect(stranger.status, JSON.stringify(stranger.body)).toBe(200);
    expect(stranger.body).toEqual({ feedback_id: item.id, vote_count: 1, has_voted: false, success: true });

    expect((await unvote(project, item.id, { userId: 'solo' })).body.vote_count).toBe(0);
    for (const userId of ['solo', 'solo', 'never-voted']) {
      const again = await unvote(project, item.id, { userId });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toEqual({ feedback_id: item.id, vote_count: 0, has_voted: false, success: true });
    }
    expect(await voteCount(project, item.id)).toBe(0);
  });

  it('a user can vote again after removing their vote', async () => {
    const item = await createFeedback(server, project);
    await vote(project, item.id, { userId: 'returning' });
    await unvote(project, item.id, { userId: 'returning' });
    const again = await vote(project, item.id, { userId: 'returning' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
  });

  it.each([[{}], [{ userId: '' }], [{ userId: 7 }]])('400 naming userId for %j, and the count is unchanged', async (body) => {
    const item = await createFeedback(server, project);
    expectError(await unvote(project, item.id, body), 400, 'userId');
    expect(await voteCount(project, item.id)).toBe(1);
  });

  it('401 without an X-API-Key and with an invalid one', async () => {
    const item = await createFeedback(server, project, { userId: 'keeper' });
    const path = `/api/v1/feedbacks/${item.id}/votes`;
    expectError(await server.request('DELETE', path, { body: { userId: 'keeper' } }), 401);
    expectError(await server.request('DELETE', path, { apiKey: 'fbk_not_a_real_key', body: { userId: 'keeper' } }), 401);
    expect(await voteCount(project, item.id)).toBe(1);
  });
});

describe('404 for a feedback id that names no item of the key project', () => {
  let mine: TestProject;
  let foreignId: string;
  beforeAll(async () => {
    mine = await createProject(server, { plan: 'pro' });
    const theirs = await createProject(server, { plan: 'pro' });
    foreignId = (await createFeedback(server, theirs)).id;
  });

  it.each([
    ['a missing id', () => MISSING_ID],
    ['a malformed id (not a UUID)', () => 'not-a-uuid'],
    ['an id of another project', () => foreignId],
  ])('POST /feedbacks/:id/votes: 404 for %s', async (_label, id) => {
    expectError(await vote(mine, id(), { userId: 'someone' }), 404);
  });

  it.each([
    ['a missing id', () => MISSING_ID],
    ['a malformed id (not a UUID)', () => 'not-a-uuid'],
    ['an id of another project', () => foreignId],
  ])('DELETE /feedbacks/:id/votes: 404 for %s', async (_label, id) => {
    expectError(await unvote(mine, id(), { userId: 'someone' }), 404);
  });

  it("the other project's item is untouched by those requests", async () => {
    const theirs = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, theirs, { userId: 'owner-user' });
    expectError(await vote(mine, item.id, { userId: 'intruder' }), 404);
    expectError(await unvote(mine, item.id, { userId: 'owner-user' }), 404);
    expect(await readFeedback(theirs, item.id, 'owner-user')).toMatchObject({ vote_count: 1, has_voted: true });
    expect((await readFeedback(theirs, item.id, 'intruder')).has_voted).toBe(false);
  });
});

describe('has_voted in GET /feedbacks/:id', () => {
  it('follows X-User-Id after voting and after unvoting, and is false without the header', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, project, { userId: 'writer' });
    expect((await readFeedback(project, item.id, 'reader')).has_voted).toBe(false);

    await vote(project, item.id, { userId: 'reader' });
    expect(await readFeedback(project, item.id, 'reader')).toMatchObject({ has_voted: true, vote_count: 2 });
    expect((await readFeedback(project, item.id, 'bystander')).has_voted).toBe(false);
    expect((await readFeedback(project, item.id)).has_voted).toBe(false);

    await unvote(project, item.id, { userId: 'reader' });
    expect(await readFeedback(project, item.id, 'reader')).toMatchObject({ has_voted: false, vote_count: 1 });
    expect((await readFeedback(project, item.id, 'writer')).has_voted).toBe(true);
  });
});

describe('votes under concurrency', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('each user may vote once: 100 concurrent votes by one user give exactly one 200 and 99 409, vote_count +1', async () => {
    const item = await createFeedback(server, project);
    const responses = await Promise.all(Array.from({ length: 100 }, () => vote(project, item.id, { userId: 'eager' })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(99);
    for (const conflict of responses.filter((r) => r.status === 409)) expectError(conflict, 409);
    expect(responses.find((r) => r.status === 200)?.body).toEqual({ feedback_id: item.id, vote_count: 2, has_voted: true, success: true });
    expect(await voteCount(project, item.id)).toBe(2);
  });

  it('50 concurrent votes by 50 different users all succeed and vote_count is exact', async () => {
    const item = await createFeedback(server, project);
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => vote(project, item.id, { userId: `crowd-${i}` })));
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(200));
    // Each response reports the count after its own vote: together they are exactly 2..51.
    expect(responses.map((r) => r.body.vote_count).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 2),
    );
    expect(await voteCount(project, item.id)).toBe(51);
  });

  it('concurrent votes and unvotes of many users leave vote_count equal to the number of remaining voters', async () => {
    const item = await createFeedback(server, project, { userId: 'origin' });
    const users = Array.from({ length: 60 }, (_, i) => `mixed-${i}-${randomUUID().slice(0, 4)}`);
    // Users 0..39 hold a vote before the burst.
    await Promise.all(users.slice(0, 40).map((userId) => vote(project, item.id, { userId })));
    expect(await voteCount(project, item.id)).toBe(41);

    const leaving = users.slice(0, 20); // unvote
    const staying = users.slice(20, 30); // vote again: 409
    const racing = users.slice(30, 40); // vote and unvote at once: either outcome
    const joining = users.slice(40, 60); // vote
    const [leave, stay, raceUnvote, raceVote, join] = await Promise.all([
      Promise.all(leaving.map((userId) => unvote(project, item.id, { userId }))),
      Promise.all(staying.map((userId) => vote(project, item.id, { userId }))),
      Promise.all(racing.map((userId) => unvote(project, item.id, { userId }))),
      Promise.all(racing.map((userId) => vote(project, item.id, { userId }))),
      Promise.all(joining.map((userId) => vote(project, item.id, { userId }))),
    ]);
    expect(leave.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(leave.every((r) => r.body.has_voted === false)).toBe(true);
    expect(stay.map((r) => r.status)).toEqual(Array(10).fill(409));
    expect(raceUnvote.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(raceVote.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    expect(join.map((r) => r.status)).toEqual(Array(20).fill(200));

    const hasVoted = await Promise.all(
      ['origin', ...users].map(async (userId) => [userId, (await readFeedback(project, item.id, userId)).has_voted] as const),
    );
    const remaining = hasVoted.filter(([, voted]) => voted).map(([userId]) => userId);
    for (const userId of leaving) expect(remaining).not.toContain(userId);
    for (const userId of [...staying, ...joining, 'origin']) expect(remaining).toContain(userId);
    expect(await voteCount(project, item.id)).toBe(remaining.length);
    // The 10 racing users: 10 + 20 + 1 fixed voters, plus however many racers ended with a vote.
    expect(remaining.length).toBeGreaterThanOrEqual(31);
    expect(remaining.length).toBeLessThanOrEqual(41);
  });
});
