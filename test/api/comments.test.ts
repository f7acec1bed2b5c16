import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, MISSING_ID } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** SPEC 2.5's fields, and `feedback_id`, which the origin's Kotlin SDK requires (docs/clients.md). */
const COMMENT_FIELDS = ['id', 'feedback_id', 'content', 'user_id', 'is_admin', 'created_at'].sort();

/** Every error outside the metrics API has the SPEC 7.1 body `{ error: true, reason }`. */

const postComment = (project: TestProject, feedbackId: string, body: unknown) =>
  server.request('POST', `/api/v1/feedbacks/${feedbackId}/comments`, { apiKey: project.apiKey, body });

async function listComments(project: TestProject, feedbackId: string): Promise<any[]> {
  const response = await server.request('GET', `/api/v1/feedbacks/${feedbackId}/comments`, { apiKey: project.apiKey });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(Array.isArray(response.body)).toBe(true);
  return response.body;
}

async function commentCount(project: TestProject, feedbackId: string): Promise<number> {
  const response = await server.request('GET', `/api/v1/feedbacks/${feedbackId}`, { apiKey: project.apiKey });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.comment_count;
}

/** An answer's timestamp: RFC 3339 in whole seconds, UTC (src/core/time.ts). */
const isIsoTimestamp = (value: unknown) =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value) && !Number.isNaN(Date.parse(value));

describe('POST /feedbacks/:id/comments', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('adds a comment and returns exactly the Comment of SPEC 2.5: {id, content, user_id, is_admin, created_at}, and feedback_id', async () => {
    const item = await createFeedback(server, project);
    const before = Date.now();
    const response = await postComment(project, item.id, { content: 'Me too!', userId: 'commenter' });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(COMMENT_FIELDS);
    expect(response.body).toEqual({
      id: expect.stringMatching(UUID),
      feedback_id: item.id,
      content: 'Me too!',
      user_id: 'commenter',
      is_admin: false,
      created_at: expect.any(String),
    });
    expect(isIsoTimestamp(response.body.created_at)).toBe(true);
    // Server and test share the clock; allow for its millisecond rounding.
    expect(new Date(response.body.created_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(response.body.created_at).getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    expect(await listComments(project, item.id)).toEqual([response.body]);
    expect(await commentCount(project, item.id)).toBe(1);
  });

  it('is_admin defaults to false', async () => {
    const item = await createFeedback(server, project);
    const response = await postComment(project, item.id, { content: 'plain', userId: 'u' });
    expect(response.body.is_admin).toBe(false);
  });

  it.each([
    [{ content: 'From the team', userId: 'staff', isAdmin: true }],
    [{ content: 'From the team', user_id: 'staff', is_admin: true }],
  ])('isAdmin / is_admin true is kept: %j', async (body) => {
    const item = await createFeedback(server, project);
    const response = await postComment(project, item.id, body);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toMatchObject({ content: 'From the team', user_id: 'staff', is_admin: true });
    expect((await listComments(project, item.id))[0]).toMatchObject({ user_id: 'staff', is_admin: true });
  });

  it('isAdmin false is kept', async () => {
    const item = await createFeedback(server, project);
    const response = await postComment(project, item.id, { content: 'not staff', userId: 'u', isAdmin: false });
    expect(response.status).toBe(200);
    expect(response.body.is_admin).toBe(false);
  });

  it('accepts content of exactly 2000 characters and 1 character', async () => {
    const item = await createFeedback(server, project);
    const long = await postComment(project, item.id, { content: 'c'.repeat(2000), userId: 'u' });
    expect(long.status, JSON.stringify(long.body)).toBe(200);
    expect(long.body.content).toHaveLength(2000);
    const short = await postComment(project, item.id, { content: 'k', userId: 'u' });
    expect(short.status, JSON.stringify(short.body)).toBe(200);
    expect(short.body.content).toBe('k');
    expect(await commentCount(project, item.id)).toBe(2);
  });

  it.each([
    ['content of 2001 characters', { content: 'c'.repeat(2001), userId: 'u' }, 'content'],
    ['empty content', { content: '', userId: 'u' }, 'content'],
    ['missing content', { userId: 'u' }, 'content'],
    ['content not a string', { content: 12, userId: 'u' }, 'content'],
    ['missing userId', { content: 'hello' }, 'userId'],
    ['empty userId', { content: 'hello', userId: '' }, 'userId'],
    ['empty user_id', { content: 'hello', user_id: '' }, 'userId'],
    ['isAdmin not a boolean', { content: 'hello', userId: 'u', isAdmin: 'yes' }, 'isAdmin'],
  ])('400 naming the field for %s, and no comment is created', async (_label, body, field) => {
    const item = await createFeedback(server, project);
    expectError(await postComment(project, item.id, body), 400, field);
    expect(await listComments(project, item.id)).toEqual([]);
    expect(await commentCount(project, item.id)).toBe(0);
  });

  it('400 on a body that is not JSON', async () => {
    const item = await createFeedback(server, project);
    const response = await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      rawBody: '{"content":',
    });
    expectError(response, 400);
    expect(await commentCount(project, item.id)).toBe(0);
  });

  it('403 on an archived project, and no comment is created', async () => {
    const archivedProject = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, archivedProject);
    const archive = await server.request('PATCH', `/api/v1/projects/${archivedProject.id}`, {
      bearer: archivedProject.account.adminToken,
      body: { archived: true },
    });
    expect(archive.status, JSON.stringify(archive.body)).toBe(200);
    expect(archive.body.archived).toBe(true);

    expectError(await postComment(archivedProject, item.id, { content: 'too late', userId: 'u' }), 403);
    expect(await listComments(archivedProject, item.id)).toEqual([]);
    expect(await commentCount(archivedProject, item.id)).toBe(0);
  });

  it('401 without an X-API-Key and with an invalid one, and no comment is created', async () => {
    const item = await createFeedback(server, project);
    const path = `/api/v1/feedbacks/${item.id}/comments`;
    expectError(await server.request('POST', path, { body: { content: 'anon', userId: 'u' } }), 401);
    expectError(await server.request('POST', path, { apiKey: 'fbk_not_a_real_key', body: { content: 'anon', userId: 'u' } }), 401);
    expectError(await server.request('GET', path), 401);
    expect(await commentCount(project, item.id)).toBe(0);
  });
});

describe('404 for a feedback id that names no item of the key project', () => {
  let mine: TestProject;
  let theirs: TestProject;
  let foreignId: string;
  beforeAll(async () => {
    mine = await createProject(server, { plan: 'pro' });
    theirs = await createProject(server, { plan: 'pro' });
    foreignId = (await createFeedback(server, theirs)).id;
    const seeded = await postComment(theirs, foreignId, { content: 'private', userId: 'insider' });
    expect(seeded.status).toBe(200);
  });

  const cases: [string, () => string][] = [
    ['a missing id', () => MISSING_ID],
    ['a malformed id (not a UUID)', () => 'not-a-uuid'],
    ['an id of another project', () => foreignId],
  ];

  it.each(cases)('GET /feedbacks/:id/comments: 404 for %s', async (_label, id) => {
    const response = await server.request('GET', `/api/v1/feedbacks/${id()}/comments`, { apiKey: mine.apiKey });
    expectError(response, 404);
  });

  it.each(cases)('POST /feedbacks/:id/comments: 404 for %s', async (_label, id) => {
    expectError(await postComment(mine, id(), { content: 'hello', userId: 'u' }), 404);
  });

  it("the other project's item is untouched by those requests", async () => {
    const comments = await listComments(theirs, foreignId);
    expect(comments.map((c) => c.content)).toEqual(['private']);
    expect(await commentCount(theirs, foreignId)).toBe(1);
  });
});

describe('GET /feedbacks/:id/comments', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('is an empty array for an item without comments', async () => {
    const item = await createFeedback(server, project);
    expect(await listComments(project, item.id)).toEqual([]);
  });

  it('lists comments sorted by created_at ascending, each in the SPEC 2.5 shape', async () => {
    const item = await createFeedback(server, project);
    const posted: any[] = [];
    for (const content of ['first', 'second', 'third', 'fourth']) {
      const response = await postComment(project, item.id, { content, userId: `author-${content}` });
      expect(response.status).toBe(200);
      posted.push(response.body);
    }
    const list = await listComments(project, item.id);
    expect(list).toEqual(posted);
    for (const comment of list) expect(Object.keys(comment).sort()).toEqual(COMMENT_FIELDS);
    const times = list.map((c) => Date.parse(c.created_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('keeps a stable created_at ascending order for 30 comments added in a concurrent burst', async () => {
    const item = await createFeedback(server, project);
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => postComment(project, item.id, { content: `burst ${i}`, userId: `b${i}` })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(30).fill(200));

    const first = await listComments(project, item.id);
    expect(first).toHaveLength(30);
    expect(new Set(first.map((c) => c.id))).toEqual(new Set(responses.map((r) => r.body.id)));
    const times = first.map((c) => Date.parse(c.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1] as number);

    const ids = first.map((c) => c.id);
    for (let read = 0; read < 5; read++) {
      expect((await listComments(project, item.id)).map((c) => c.id)).toEqual(ids);
    }
  });

  it('comment_count of the feedback stays exact after concurrent comments', async () => {
    const item = await createFeedback(server, project);
    await postComment(project, item.id, { content: 'before the burst', userId: 'early' });
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) => postComment(project, item.id, { content: `c ${i}`, userId: `user-${i % 7}` })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(40).fill(200));
    expect(await commentCount(project, item.id)).toBe(41);
    expect(await listComments(project, item.id)).toHaveLength(41);
    const listed = await server.request('GET', '/api/v1/feedbacks?sort=comments', { apiKey: project.apiKey });
    expect(listed.body.find((f: any) => f.id === item.id)?.comment_count).toBe(41);
  });

  it('comments do not change vote_count', async () => {
    const item = await createFeedback(server, project);
    await postComment(project, item.id, { content: 'just a comment', userId: 'talker' });
    const read = await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: project.apiKey, userId: 'talker' });
    expect(read.body).toMatchObject({ vote_count: 1, has_voted: false, comment_count: 1 });
  });
});
