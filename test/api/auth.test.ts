import { beforeAll, describe, expect, it } from 'vitest';
import { errorBody } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

const server = useTestServer();

type Route = { method: string; path: (feedbackId: string) => string; body?: unknown };

/** Every route authenticated by X-API-Key (SPEC 4.1 to 4.8). */
const KEY_ROUTES: Route[] = [
  { method: 'GET', path: () => '/api/v1/feedbacks' },
  {
    method: 'POST',
    path: () => '/api/v1/feedbacks',
    body: { title: 't', description: 'd', category: 'other', userId: 'intruder' },
  },
  { method: 'GET', path: (id) => `/api/v1/feedbacks/${id}` },
  { method: 'POST', path: (id) => `/api/v1/feedbacks/${id}/votes`, body: { userId: 'intruder' } },
  { method: 'DELETE', path: (id) => `/api/v1/feedbacks/${id}/votes`, body: { userId: 'intruder' } },
  { method: 'GET', path: (id) => `/api/v1/feedbacks/${id}/comments` },
  { method: 'POST', path: (id) => `/api/v1/feedbacks/${id}/comments`, body: { content: 'hi', userId: 'intruder' } },
  { method: 'POST', path: () => '/api/v1/users/register', body: { userId: 'intruder' } },
];

/** Reads the project's state as the owner sees it (with merged items) to prove nothing was written. */
async function snapshot(project: TestProject) {
  const list = await server.request('GET', '/api/v1/feedbacks?includeMerged=true&sort=oldest', {
    apiKey: project.apiKey,
  });
  expect(list.status).toBe(200);
  return list.body.map((f: any) => ({ id: f.id, vote_count: f.vote_count, comment_count: f.comment_count }));
}

describe('X-API-Key authentication', () => {
  let project: TestProject;
  let feedbackId: string;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    feedbackId = (await createFeedback(server, project)).id;
  });

  it.each(KEY_ROUTES.map((route) => [`${route.method} ${route.path(':id')}`, route] as const))(
    '%s answers 401 {error, reason} without X-API-Key and with a wrong key',
    async (_name, route) => {
      const before = await snapshot(project);
      for (const apiKey of [undefined, 'fbk_wrong_key', '', project.apiKey.slice(0, -1)]) {
        const response = await server.request(route.method, route.path(feedbackId), {
          ...(apiKey === undefined ? {} : { apiKey }),
          ...(route.body === undefined ? {} : { body: route.body }),
        });
        expect(response.status, `key ${JSON.stringify(apiKey)}`).toBe(401);
        expect(response.body).toEqual(errorBody);
      }
      expect(await snapshot(project)).toEqual(before);
    },
  );

  it('an admin bearer token is not an API key', async () => {
    const response = await server.request('GET', '/api/v1/feedbacks', { bearer: project.account.adminToken });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody);
  });

  it('the API key is not an admin bearer token', async () => {
    const response = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.apiKey });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody);
  });

  it('authentication is checked before validation: a bad body without a key is 401, not 400', async () => {
    const response = await server.request('POST', '/api/v1/feedbacks', { body: { title: '' } });
    expect(response.status).toBe(401);
  });
});

describe('archived project', () => {
  let project: TestProject;
  let feedbackId: string;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    feedbackId = (await createFeedback(server, project, { userId: 'creator' })).id;
    await server.request('POST', `/api/v1/feedbacks/${feedbackId}/comments`, {
      apiKey: project.apiKey,
      body: { content: 'before archiving', userId: 'creator' },
    });
    const archive = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { archived: true },
    });
    expect(archive.status).toBe(200);
  });

  it('POST /feedbacks, POST votes and POST comments are 403 and nothing is written', async () => {
    const before = await snapshot(project);
    const writes = [
      server.request('POST', '/api/v1/feedbacks', {
        apiKey: project.apiKey,
        body: { title: 'archived', description: 'd', category: 'other', userId: 'late' },
      }),
      server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey: project.apiKey, body: { userId: 'late' } }),
      server.request('POST', `/api/v1/feedbacks/${feedbackId}/comments`, {
        apiKey: project.apiKey,
        body: { content: 'after archiving', userId: 'late' },
      }),
    ];
    for (const response of await Promise.all(writes)) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody);
    }
    expect(await snapshot(project)).toEqual(before);
    expect(before).toEqual([{ id: feedbackId, vote_count: 1, comment_count: 1 }]);
    const comments = await server.request('GET', `/api/v1/feedbacks/${feedbackId}/comments`, { apiKey: project.apiKey });
    expect(comments.body.map((c: any) => c.content)).toEqual(['before archiving']);
    const late = await server.request('GET', `/api/v1/feedbacks/${feedbackId}`, { apiKey: project.apiKey, userId: 'late' });
    expect(late.body.has_voted).toBe(false);
  });

  it('reads still work: GET /feedbacks, GET /feedbacks/:id and GET comments', async () => {
    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.map((f: any) => f.id)).toEqual([feedbackId]);
    expect((await server.request('GET', `/api/v1/feedbacks/${feedbackId}`, { apiKey: project.apiKey })).status).toBe(200);
    const comments = await server.request('GET', `/api/v1/feedbacks/${feedbackId}/comments`, { apiKey: project.apiKey });
    expect(comments.status).toBe(200);
  });
});

describe('cross-project isolation', () => {
  let a: TestProject;
  let b: TestProject;
  let itemA: any;
  let itemB: any;
  beforeAll(async () => {
    a = await createProject(server, { plan: 'pro' });
    b = await createProject(server, { plan: 'pro' });
    itemA = await createFeedback(server, a, { title: 'only in A' });
    itemB = await createFeedback(server, b, { title: 'only in B' });
  });

  it('the list of project A never shows project B items, even with includeMerged', async () => {
    for (const query of ['', '?includeMerged=true', '?sort=newest', '?status=pending']) {
      const list = await server.request('GET', `/api/v1/feedbacks${query}`, { apiKey: a.apiKey });
      expect(list.status).toBe(200);
      expect(list.body.map((f: any) => f.id)).toEqual([itemA.id]);
    }
  });

  it('project A key gets 404 on every route addressing a project B item, and B is unchanged', async () => {
    const routes: [string, string, unknown][] = [
      ['GET', `/api/v1/feedbacks/${itemB.id}`, undefined],
      ['POST', `/api/v1/feedbacks/${itemB.id}/votes`, { userId: 'from-a' }],
      ['DELETE', `/api/v1/feedbacks/${itemB.id}/votes`, { userId: itemB.user_id }],
      ['GET', `/api/v1/feedbacks/${itemB.id}/comments`, undefined],
      ['POST', `/api/v1/feedbacks/${itemB.id}/comments`, { content: 'from A', userId: 'from-a' }],
    ];
    for (const [method, path, body] of routes) {
      const response = await server.request(method, path, { apiKey: a.apiKey, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
    const read = await server.request('GET', `/api/v1/feedbacks/${itemB.id}`, { apiKey: b.apiKey, userId: itemB.user_id });
    expect(read.body).toMatchObject({ vote_count: 1, comment_count: 0, has_voted: true });
  });

  it('SDK users are per project: registering a user in A does not change total_mrr in B', async () => {
    await server.request('POST', '/api/v1/users/register', { apiKey: a.apiKey, body: { userId: itemB.user_id, mrr: 50 } });
    const read = await server.request('GET', `/api/v1/feedbacks/${itemB.id}`, { apiKey: b.apiKey });
    expect(read.body.total_mrr).toBeNull();
  });
});

describe('routes outside the API', () => {
  it.each(['/api/v1/nope', '/nope', '/api/v2/feedbacks', '/api/v1/feedbacks/x/y/z'])(
    'GET %s is 404 with the SPEC 7.1 body',
    async (path) => {
      const response = await server.request('GET', path);
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody);
    },
  );

  it.each([
    ['PUT', '/api/v1/feedbacks', 'HEAD, GET, POST'],
    ['GET', '/api/v1/events/track', 'POST'],
    ['PATCH', '/api/v1/feedbacks/00000000-0000-4000-8000-000000000000/votes', 'POST, DELETE'],
  ])('%s %s (a known path, another method) is 405 with Allow and the SPEC 7.1 body', async (method, path, allow) => {
    const response = await server.request(method, path);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringContaining(`allowed: ${allow}`),
      message: expect.stringContaining(`allowed: ${allow}`),
    });
  });

  it('GET /healthz is 200 without authentication', async () => {
    const response = await server.request('GET', '/healthz');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok' });
  });

  it('GET /readyz is 200 with postgres ok', async () => {
    const response = await server.request('GET', '/readyz');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok', checks: { postgres: 'ok' } });
  });
});

describe('response casing', () => {
  const camel = /[A-Z]/;

  /** Every key of every object in the body, recursively. */
  function keysOf(value: unknown): string[] {
    if (Array.isArray(value)) return value.flatMap(keysOf);
    if (value === null || typeof value !== 'object') return [];
    return Object.entries(value).flatMap(([key, v]) => [key, ...keysOf(v)]);
  }

  it('no response body carries a camelCase key', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await createFeedback(server, project, { userId: 'casing', userEmail: 'casing@example.com' });
    const other = await createFeedback(server, project);
    const bodies: unknown[] = [created];
    const send = async (method: string, path: string, options: Parameters<TestServer['request']>[2] = {}) => {
      const response = await server.request(method, path, options);
      expect(response.status, `${method} ${path}`).toBe(200);
      bodies.push(response.body);
    };
    const key = { apiKey: project.apiKey };
    const admin = { bearer: project.account.adminToken };
    await send('GET', '/api/v1/feedbacks', { ...key, userId: 'casing' });
    await send('GET', `/api/v1/feedbacks/${created.id}`, key);
    await send('POST', `/api/v1/feedbacks/${created.id}/votes`, { ...key, body: { userId: 'voter', notifyStatusChange: true } });
    await send('DELETE', `/api/v1/feedbacks/${created.id}/votes`, { ...key, body: { userId: 'voter' } });
    await send('POST', `/api/v1/feedbacks/${created.id}/comments`, { ...key, body: { content: 'c', userId: 'u', isAdmin: true } });
    await send('GET', `/api/v1/feedbacks/${created.id}/comments`, key);
    await send('POST', '/api/v1/users/register', { ...key, body: { userId: 'casing', mrr: 3 } });
    await send('GET', '/api/v1/projects', admin);
    await send('GET', `/api/v1/projects/${project.id}`, admin);
    await send('GET', `/api/v1/projects/${project.id}/feedbacks`, admin);
    await send('PATCH', `/api/v1/projects/${project.id}/feedbacks/${other.id}`, {
      ...admin,
      body: { status: 'rejected', rejectionReason: 'no' },
    });
    await send('POST', `/api/v1/projects/${project.id}/feedbacks/${other.id}/merge`, { ...admin, body: { intoId: created.id } });
    await send('GET', `/api/v1/feedbacks/${created.id}`, key);

    for (const body of bodies) {
      expect(
        keysOf(body).filter((k) => camel.test(k)),
        JSON.stringify(body),
      ).toEqual([]);
    }
    // The Feedback body is exactly SPEC 2.1, in snake_case.
    expect(Object.keys(created)).toEqual(
      expect.arrayContaining(['user_id', 'user_email', 'vote_count', 'has_voted', 'comment_count', 'total_mrr']),
    );
    expect(Object.keys(created).filter((k) => camel.test(k))).toEqual([]);
  });
});
