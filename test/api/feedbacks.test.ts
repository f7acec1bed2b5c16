import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const FEEDBACK_FIELDS = [
  'id',
  'title',
  'description',
  'status',
  'category',
  'user_id',
  'user_email',
  'vote_count',
  'has_voted',
  'comment_count',
  'total_mrr',
  'created_at',
  'updated_at',
  'rejection_reason',
  'merged_into_id',
  'merged_at',
  'merged_feedback_ids',
].sort();

describe('POST /feedbacks', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('creates an item with the creator vote counted, in the snake_case shape of SPEC 2.1', async () => {
    const body = await createFeedback(server, project, { userId: 'alice', userEmail: 'alice@example.com' });
    expect(Object.keys(body).sort()).toEqual(FEEDBACK_FIELDS);
    expect(body).toMatchObject({
      title: 'Dark mode',
      status: 'pending',
      category: 'feature_request',
      user_id: 'alice',
      user_email: 'alice@example.com',
      vote_count: 1,
      // SPEC 2.1: no X-User-Id, so false, although the creator's vote exists.
      has_voted: false,
      comment_count: 0,
      total_mrr: null,
      rejection_reason: null,
      merged_into_id: null,
      merged_at: null,
      merged_feedback_ids: null,
    });
    // RFC 3339 in whole seconds, UTC: the origin's Swift SDK (`.iso8601`) refuses a fraction.
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(body.updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const read = await server.request('GET', `/api/v1/feedbacks/${body.id}`, { apiKey: project.apiKey, userId: 'alice' });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ vote_count: 1, has_voted: true });
  });

  it('has_voted on create follows X-User-Id (SPEC 2.1): true for the creator, false for another user and without it', async () => {
    const create = (userId?: string) =>
      server.request('POST', '/api/v1/feedbacks', {
        apiKey: project.apiKey,
        ...(userId === undefined ? {} : { userId }),
        body: { title: 'T', description: 'D', category: 'other', userId: 'carol' },
      });
    expect((await create('carol')).body).toMatchObject({ vote_count: 1, has_voted: true });
    expect((await create('dave')).body).toMatchObject({ vote_count: 1, has_voted: false });
    expect((await create()).body).toMatchObject({ vote_count: 1, has_voted: false });
  });

  it('accepts snake_case request fields (user_id, user_email)', async () => {
    const response = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.apiKey,
      body: { title: 'T', description: 'D', category: 'bug_report', user_id: 'bob', user_email: 'bob@example.com' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ user_id: 'bob', user_email: 'bob@example.com', category: 'bug_report' });
  });

  it.each([
    [{ description: 'd', category: 'other', userId: 'u' }, 'title'],
    [{ title: '', description: 'd', category: 'other', userId: 'u' }, 'title'],
    [{ title: 'x'.repeat(201), description: 'd', category: 'other', userId: 'u' }, 'title'],
    [{ title: 't', description: '', category: 'other', userId: 'u' }, 'description'],
    [{ title: 't', description: 'x'.repeat(5001), category: 'other', userId: 'u' }, 'description'],
    [{ title: 't', description: 'd', category: 'wish', userId: 'u' }, 'category'],
    [{ title: 't', description: 'd', category: 'other' }, 'userId'],
    [{ title: 't', description: 'd', category: 'other', userId: '' }, 'userId'],
    [{ title: 't', description: 'd', category: 'other', userId: 'u', userEmail: 'not-an-email' }, 'userEmail'],
    [{ title: 7, description: 'd', category: 'other', userId: 'u' }, 'title'],
  ])('400 naming the field for %j', async (body, field) => {
    const response = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, body });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe(true);
    expect(response.body.reason).toContain(field);
  });

  it('accepts the limits exactly: title 200 and description 5000 characters', async () => {
    const body = await createFeedback(server, project, { title: 't'.repeat(200), description: 'd'.repeat(5000) });
    expect(body.title).toHaveLength(200);
  });

  it('400 on a body that is not JSON', async () => {
    const response = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, rawBody: '{oops' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringContaining('JSON'), message: expect.stringContaining('JSON') });
  });
});

describe('the Free tier limit of 10 items per project', () => {
  it('402 on the 11th item, and nothing is stored; an upgrade lifts the limit', async () => {
    const project = await createProject(server, { plan: 'free' });
    for (let i = 0; i < 10; i++) await createFeedback(server, project, { title: `item ${i}` });
    const refused = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.apiKey,
      body: { title: 'eleventh', description: 'd', category: 'other', userId: 'u' },
    });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(list.body).toHaveLength(10);

    await setPlan(server, project.account, 'pro');
    await createFeedback(server, project, { title: 'after upgrade' });
  });

  it('holds under concurrent creation: 20 parallel requests on an empty Free project store exactly 10', async () => {
    const project = await createProject(server, { plan: 'free' });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        server.request('POST', '/api/v1/feedbacks', {
          apiKey: project.apiKey,
          body: { title: `parallel ${i}`, description: 'd', category: 'other', userId: `u${i}` },
        }),
      ),
    );
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(10);
  });
});

describe('GET /feedbacks', () => {
  let project: TestProject;
  let items: Record<string, any>;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    const a = await createFeedback(server, project, { title: 'A', category: 'feature_request', userId: 'ua' });
    const b = await createFeedback(server, project, { title: 'B', category: 'bug_report', userId: 'ub' });
    const c = await createFeedback(server, project, { title: 'C', category: 'feature_request', userId: 'uc' });
    // B gets two more votes, C one more; A gets two comments.
    for (const userId of ['v1', 'v2']) {
      await server.request('POST', `/api/v1/feedbacks/${b.id}/votes`, { apiKey: project.apiKey, body: { userId } });
    }
    await server.request('POST', `/api/v1/feedbacks/${c.id}/votes`, { apiKey: project.apiKey, body: { userId: 'v1' } });
    for (const content of ['one', 'two']) {
      await server.request('POST', `/api/v1/feedbacks/${a.id}/comments`, {
        apiKey: project.apiKey,
        body: { content, userId: 'v3' },
      });
    }
    items = { a, b, c };
  });

  const titles = (body: any[]) => body.map((item) => item.title);

  it('sorts by vote count descending by default', async () => {
    const response = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(response.status).toBe(200);
    expect(titles(response.body)).toEqual(['B', 'C', 'A']);
  });

  it.each([
    ['newest', ['C', 'B', 'A']],
    ['oldest', ['A', 'B', 'C']],
    ['comments', ['A', 'C', 'B']],
    ['votes', ['B', 'C', 'A']],
  ])('sort=%s', async (sort, expected) => {
    const response = await server.request('GET', `/api/v1/feedbacks?sort=${sort}`, { apiKey: project.apiKey });
    expect(titles(response.body)).toEqual(expected);
  });

  it('filters by status and category', async () => {
    const byCategory = await server.request('GET', '/api/v1/feedbacks?category=feature_request&sort=oldest', {
      apiKey: project.apiKey,
    });
    expect(titles(byCategory.body)).toEqual(['A', 'C']);
    const byStatus = await server.request('GET', '/api/v1/feedbacks?status=completed', { apiKey: project.apiKey });
    expect(byStatus.body).toEqual([]);
    const pending = await server.request('GET', '/api/v1/feedbacks?status=pending', { apiKey: project.apiKey });
    expect(pending.body).toHaveLength(3);
  });

  it.each(['sort=best', 'status=done', 'category=idea', 'includeMerged=maybe', 'limit=0'])('400 on %s', async (query) => {
    const response = await server.request('GET', `/api/v1/feedbacks?${query}`, { apiKey: project.apiKey });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringContaining(query.split('=')[0] as string),
      message: expect.stringContaining(query.split('=')[0] as string),
    });
  });

  it('has_voted follows X-User-Id and is false without it', async () => {
    const anonymous = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(anonymous.body.every((item: any) => item.has_voted === false)).toBe(true);
    const v1 = await server.request('GET', '/api/v1/feedbacks?sort=oldest', { apiKey: project.apiKey, userId: 'v1' });
    expect(v1.body.map((item: any) => item.has_voted)).toEqual([false, true, true]);
  });

  it('X-User-Id sent twice (the Kotlin SDK as its README configures it): equal values read as one, differing ones are a 400', async () => {
    const repeated = await getWithRepeatedUserId(`/api/v1/feedbacks?sort=oldest`, project.apiKey, ['v1', 'v1']);
    expect(repeated.status).toBe(200);
    expect((repeated.body as any[]).map((item) => item.has_voted)).toEqual([false, true, true]);
    const one = await getWithRepeatedUserId(`/api/v1/feedbacks/${items.b.id}`, project.apiKey, ['v2', 'v2']);
    expect(one.body).toMatchObject({ id: items.b.id, has_voted: true });
    const differing = await getWithRepeatedUserId(`/api/v1/feedbacks/${items.b.id}`, project.apiKey, ['v2', 'v1']);
    expect(differing.status).toBe(400);
    expect(differing.body).toEqual({
      error: true,
      reason: expect.stringContaining('X-User-Id'),
      message: expect.stringContaining('X-User-Id'),
    });
  });

  it('total_mrr sums the current MRR of voters and is null when no voter has one', async () => {
    const before = await server.request('GET', `/api/v1/feedbacks/${items.b.id}`, { apiKey: project.apiKey });
    expect(before.body.total_mrr).toBeNull();
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'v1', mrr: 10.5 } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'v2', mrr: 4 } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'v3', mrr: 100 } });
    const after = await server.request('GET', `/api/v1/feedbacks/${items.b.id}`, { apiKey: project.apiKey });
    expect(after.body.total_mrr).toBe(14.5);
    // v3 only commented on A: comments do not count towards total_mrr.
    const a = await server.request('GET', `/api/v1/feedbacks/${items.a.id}`, { apiKey: project.apiKey });
    expect(a.body.total_mrr).toBeNull();
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'v2', mrr: 6 } });
    const updated = await server.request('GET', `/api/v1/feedbacks/${items.b.id}`, { apiKey: project.apiKey });
    expect(updated.body.total_mrr).toBe(16.5);
  });

  it('keeps a stable order for ties (same sort key) across repeated reads', async () => {
    const tied = await createProject(server, { plan: 'pro' });
    for (let i = 0; i < 8; i++) await createFeedback(server, tied, { title: `tie ${i}` });
    const first = await server.request('GET', '/api/v1/feedbacks', { apiKey: tied.apiKey });
    for (let i = 0; i < 3; i++) {
      const again = await server.request('GET', '/api/v1/feedbacks', { apiKey: tied.apiKey });
      expect(again.body.map((x: any) => x.id)).toEqual(first.body.map((x: any) => x.id));
    }
  });
});

describe('GET /feedbacks/:id', () => {
  it('404 for a missing id, a malformed id and an id of another project, in the SPEC 7.1 body', async () => {
    const mine = await createProject(server);
    const theirs = await createProject(server);
    const foreign = await createFeedback(server, theirs);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', foreign.id]) {
      const response = await server.request('GET', `/api/v1/feedbacks/${id}`, { apiKey: mine.apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
    }
  });
});

/**
 * A GET with X-User-Id on separate header lines, as OkHttp's addHeader sends it (fetch would join
 * the values into one line).
 */
function getWithRepeatedUserId(path: string, apiKey: string, userIds: string[]): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${server.url}${path}`, { headers: { 'x-api-key': apiKey, 'x-user-id': userIds } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
    });
    request.on('error', reject);
    request.end();
  });
}
