import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { errorBody, MISSING_ID } from '../helpers/expect.js';
import { createAccount, createFeedback, createProject, setPlan, type TestAccount, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const uniqueEmail = () => `owner-${randomUUID()}@example.com`;

/** POST /projects with the account's admin token, returning the raw response. */
function postProject(account: TestAccount, name = `project ${randomUUID().slice(0, 8)}`) {
  return server.request('POST', '/api/v1/projects', { bearer: account.adminToken, body: { name } });
}

describe('POST /api/v1/admin/accounts (operator)', () => {
  it('creates an account and shows its admin token once', async () => {
    const email = uniqueEmail();
    const response = await server.request('POST', '/api/v1/admin/accounts', {
      bearer: server.operatorToken,
      body: { email, plan: 'pro' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email,
      plan: 'pro',
      admin_token: expect.any(String),
      created_at: expect.any(String),
    });
    expect(response.body.admin_token.length).toBeGreaterThanOrEqual(20);
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // The token works as the account's admin bearer.
    const projects = await server.request('GET', '/api/v1/projects', { bearer: response.body.admin_token });
    expect(projects.status).toBe(200);
    expect(projects.body).toEqual([]);
  });

  it('gives every account its own admin token', async () => {
    const a = await createAccount(server);
    const b = await createAccount(server);
    expect(a.adminToken).not.toBe(b.adminToken);
  });

  it.each([
    ['no Authorization header', undefined],
    ['a wrong operator token', 'fbo_not_the_operator_token'],
  ])('401 with %s, and no account is created', async (_label, bearer) => {
    const email = uniqueEmail();
    const response = await server.request('POST', '/api/v1/admin/accounts', {
      ...(bearer === undefined ? {} : { bearer }),
      body: { email, plan: 'free' },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody);
    // The email is still free: the refused request wrote nothing.
    const retry = await server.request('POST', '/api/v1/admin/accounts', {
      bearer: server.operatorToken,
      body: { email, plan: 'free' },
    });
    expect(retry.status).toBe(200);
  });

  it('401 when an account admin token is used as the operator token', async () => {
    const account = await createAccount(server, 'team');
    const response = await server.request('POST', '/api/v1/admin/accounts', {
      bearer: account.adminToken,
      body: { email: uniqueEmail(), plan: 'free' },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(errorBody);
  });

  it('401 for a non-Bearer Authorization scheme carrying the operator token', async () => {
    const response = await server.request('POST', '/api/v1/admin/accounts', {
      headers: { authorization: `Basic ${server.operatorToken}` },
      body: { email: uniqueEmail(), plan: 'free' },
    });
    expect(response.status).toBe(401);
  });

  it.each([
    [{ email: 'not-an-email', plan: 'free' }, 'email'],
    [{ email: '', plan: 'free' }, 'email'],
    [{ plan: 'free' }, 'email'],
    [{ email: 'someone@example.com', plan: 'enterprise' }, 'plan'],
    [{ email: 'someone@example.com', plan: 'FREE' }, 'plan'],
    [{ email: 'someone@example.com', plan: 7 }, 'plan'],
  ])('400 naming the field for %j', async (body, field) => {
    const response = await server.request('POST', '/api/v1/admin/accounts', { bearer: server.operatorToken, body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringContaining(field), message: expect.stringContaining(field) });
  });

  it('409 on a duplicate email, also when only its letter case differs', async () => {
    const email = uniqueEmail();
    const first = await server.request('POST', '/api/v1/admin/accounts', {
      bearer: server.operatorToken,
      body: { email, plan: 'free' },
    });
    expect(first.status).toBe(200);
    for (const again of [email, email.toUpperCase()]) {
      const duplicate = await server.request('POST', '/api/v1/admin/accounts', {
        bearer: server.operatorToken,
        body: { email: again, plan: 'pro' },
      });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual(errorBody);
    }
  });
});

describe('PATCH /api/v1/admin/accounts/:id (operator)', () => {
  it('changes the plan and answers the account with the new plan', async () => {
    const account = await createAccount(server, 'free');
    const response = await server.request('PATCH', `/api/v1/admin/accounts/${account.id}`, {
      bearer: server.operatorToken,
      body: { plan: 'team' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: account.id, email: account.email, plan: 'team' });
    // The admin token is shown only at creation.
    expect(response.body).not.toHaveProperty('admin_token');
  });

  it.each([MISSING_ID, 'not-a-uuid'])('404 for the unknown or malformed account id %s', async (id) => {
    const response = await server.request('PATCH', `/api/v1/admin/accounts/${id}`, {
      bearer: server.operatorToken,
      body: { plan: 'pro' },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody);
  });

  it.each([{ plan: 'gold' }, {}, { plan: null }])('400 naming plan for %j', async (body) => {
    const account = await createAccount(server, 'free');
    const response = await server.request('PATCH', `/api/v1/admin/accounts/${account.id}`, {
      bearer: server.operatorToken,
      body,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringContaining('plan'), message: expect.stringContaining('plan') });
  });

  it('401 without the operator token, including with the account own admin token', async () => {
    const account = await createAccount(server, 'free');
    for (const bearer of [undefined, account.adminToken, 'wrong']) {
      const response = await server.request('PATCH', `/api/v1/admin/accounts/${account.id}`, {
        ...(bearer === undefined ? {} : { bearer }),
        body: { plan: 'team' },
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(errorBody);
    }
    // Still on free: a second project is refused.
    expect((await postProject(account)).status).toBe(200);
    expect((await postProject(account)).status).toBe(402);
  });
});

describe('PATCH /api/v1/admin/projects/:id (operator suspension)', () => {
  let project: TestProject;
  let feedbackId: string;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    feedbackId = (await createFeedback(server, project)).id;
  });

  const keyRequests = (apiKey: string) => [
    () => server.request('GET', '/api/v1/feedbacks', { apiKey }),
    () => server.request('GET', `/api/v1/feedbacks/${feedbackId}`, { apiKey }),
    () =>
      server.request('POST', '/api/v1/feedbacks', {
        apiKey,
        body: { title: 'while suspended', description: 'd', category: 'other', userId: 'u-suspended' },
      }),
    () => server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, { apiKey, body: { userId: 'u-suspended' } }),
    () =>
      server.request('POST', `/api/v1/feedbacks/${feedbackId}/comments`, {
        apiKey,
        body: { content: 'hi', userId: 'u-suspended' },
      }),
    () => server.request('POST', '/api/v1/users/register', { apiKey, body: { userId: 'u-suspended' } }),
  ];

  it('suspending makes every X-API-Key request 403 with the SPEC 7.1 body, and nothing is written', async () => {
    const suspend = await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: server.operatorToken,
      body: { suspended: true },
    });
    expect(suspend.status).toBe(200);
    expect(suspend.body).toMatchObject({ id: project.id, suspended: true });
    expect(suspend.body).not.toHaveProperty('api_key');

    for (const send of keyRequests(project.apiKey)) {
      const response = await send();
      expect(response.status).toBe(403);
      expect(response.body).toEqual(errorBody);
    }

    const restore = await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: server.operatorToken,
      body: { suspended: false },
    });
    expect(restore.status).toBe(200);
    expect(restore.body).toMatchObject({ id: project.id, suspended: false });

    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey, userId: 'u-suspended' });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ id: feedbackId, vote_count: 1, comment_count: 0, has_voted: false });
  });

  it('lifting the suspension restores every X-API-Key request', async () => {
    const responses = [];
    for (const send of keyRequests(project.apiKey)) responses.push(await send());
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  it('the owner sees the suspension on GET /projects/:id', async () => {
    await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: server.operatorToken,
      body: { suspended: true },
    });
    const read = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: project.id, suspended: true });
    await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: server.operatorToken,
      body: { suspended: false },
    });
  });

  it('401 for the account admin token, 404 for unknown or malformed ids, 400 for a non-boolean', async () => {
    const byOwner = await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { suspended: true },
    });
    expect(byOwner.status).toBe(401);
    for (const id of [MISSING_ID, 'nope']) {
      const response = await server.request('PATCH', `/api/v1/admin/projects/${id}`, {
        bearer: server.operatorToken,
        body: { suspended: true },
      });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
    const bad = await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
      bearer: server.operatorToken,
      body: { suspended: 'yes' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: true, reason: expect.stringContaining('suspended'), message: expect.stringContaining('suspended') });
    const still = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(still.status).toBe(200);
  });
});

describe('POST /api/v1/projects (account admin token)', () => {
  it('creates a project with its API key, which then works on GET /feedbacks', async () => {
    const account = await createAccount(server, 'pro');
    const response = await postProject(account, 'My app');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'My app',
      api_key: expect.any(String),
      archived: false,
      suspended: false,
      created_at: expect.any(String),
    });
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: response.body.api_key });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
  });

  it.each([
    [{ name: '' }, 'name'],
    [{ name: '   ' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 42 }, 'name'],
    [{}, 'name'],
  ])('400 naming the field for %j', async (body, field) => {
    const account = await createAccount(server, 'team');
    const response = await server.request('POST', '/api/v1/projects', { bearer: account.adminToken, body });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringContaining(field), message: expect.stringContaining(field) });
    const list = await server.request('GET', '/api/v1/projects', { bearer: account.adminToken });
    expect(list.body).toEqual([]);
  });

  it('Free allows 1 project: the second is 402 and not stored', async () => {
    const account = await createAccount(server, 'free');
    expect((await postProject(account)).status).toBe(200);
    const refused = await postProject(account);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual(errorBody);
    const list = await server.request('GET', '/api/v1/projects', { bearer: account.adminToken });
    expect(list.body).toHaveLength(1);
  });

  it('Pro allows 2 projects: the third is 402', async () => {
    const account = await createAccount(server, 'pro');
    expect((await postProject(account)).status).toBe(200);
    expect((await postProject(account)).status).toBe(200);
    const refused = await postProject(account);
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual(errorBody);
  });

  it('Team has no project limit: more than 3 are fine', async () => {
    const account = await createAccount(server, 'team');
    for (let i = 0; i < 5; i++) expect((await postProject(account, `team ${i}`)).status).toBe(200);
    const list = await server.request('GET', '/api/v1/projects', { bearer: account.adminToken });
    expect(list.body).toHaveLength(5);
  });

  it('an upgrade by the operator lifts the limit at once', async () => {
    const account = await createAccount(server, 'free');
    expect((await postProject(account)).status).toBe(200);
    expect((await postProject(account)).status).toBe(402);
    await setPlan(server, account, 'pro');
    expect((await postProject(account)).status).toBe(200);
    expect((await postProject(account)).status).toBe(402);
    await setPlan(server, account, 'team');
    expect((await postProject(account)).status).toBe(200);
  });

  it('holds under concurrency: 5 parallel creations on Free store exactly one', async () => {
    const account = await createAccount(server, 'free');
    const responses = await Promise.all(Array.from({ length: 5 }, (_, i) => postProject(account, `parallel ${i}`)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(4);
  });

  it('401 without a bearer token and with an invalid one', async () => {
    const anonymous = await server.request('POST', '/api/v1/projects', { body: { name: 'x' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual(errorBody);
    const wrong = await server.request('POST', '/api/v1/projects', { bearer: 'fba_invalid', body: { name: 'x' } });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual(errorBody);
  });

  it('the operator token is not an account admin token', async () => {
    const response = await server.request('POST', '/api/v1/projects', {
      bearer: server.operatorToken,
      body: { name: 'x' },
    });
    expect(response.status).toBe(401);
  });
});

describe('GET /api/v1/projects and GET /api/v1/projects/:id', () => {
  let account: TestAccount;
  let first: TestProject;
  let second: TestProject;
  let foreign: TestProject;
  beforeAll(async () => {
    account = await createAccount(server, 'pro');
    first = await createProject(server, { account, name: 'first' });
    second = await createProject(server, { account, name: 'second' });
    foreign = await createProject(server, { plan: 'pro', name: 'foreign' });
  });

  it('lists only the projects of the token account, never with an api_key', async () => {
    const response = await server.request('GET', '/api/v1/projects', { bearer: account.adminToken });
    expect(response.status).toBe(200);
    expect(response.body.map((p: any) => p.id).sort()).toEqual([first.id, second.id].sort());
    expect(response.body.map((p: any) => p.id)).not.toContain(foreign.id);
    for (const project of response.body) {
      expect(project).not.toHaveProperty('api_key');
      expect(project).toMatchObject({ archived: false, suspended: false, created_at: expect.any(String) });
    }
    expect(JSON.stringify(response.body)).not.toContain(first.apiKey);
  });

  it('reads one project without its api_key', async () => {
    const response = await server.request('GET', `/api/v1/projects/${first.id}`, { bearer: account.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: first.id, name: 'first', archived: false, suspended: false });
    expect(response.body).not.toHaveProperty('api_key');
    expect(JSON.stringify(response.body)).not.toContain(first.apiKey);
  });

  it.each([MISSING_ID, 'not-a-uuid'])('404 for the unknown project id %s', async (id) => {
    const response = await server.request('GET', `/api/v1/projects/${id}`, { bearer: account.adminToken });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody);
  });

  it('401 without a bearer token or with an invalid one', async () => {
    for (const options of [{}, { bearer: 'nope' }, { apiKey: first.apiKey }]) {
      const list = await server.request('GET', '/api/v1/projects', options);
      expect(list.status).toBe(401);
      expect(list.body).toEqual(errorBody);
      const one = await server.request('GET', `/api/v1/projects/${first.id}`, options);
      expect(one.status).toBe(401);
      expect(one.body).toEqual(errorBody);
    }
  });
});

describe('PATCH /api/v1/projects/:id', () => {
  it('renames the project', async () => {
    const project = await createProject(server, { plan: 'pro', name: 'old' });
    const response = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { name: 'new name' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: project.id, name: 'new name', archived: false });
    expect(response.body).not.toHaveProperty('api_key');
    const read = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(read.body.name).toBe('new name');
  });

  it('archives and unarchives: writes through the key are 403 while archived, reads still work', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const archive = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { archived: true },
    });
    expect(archive.status).toBe(200);
    expect(archive.body).toMatchObject({ id: project.id, archived: true, name: project.name });
    const write = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.apiKey,
      body: { title: 't', description: 'd', category: 'other', userId: 'u' },
    });
    expect(write.status).toBe(403);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).status).toBe(200);

    const unarchive = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { archived: false },
    });
    expect(unarchive.status).toBe(200);
    expect(unarchive.body.archived).toBe(false);
    await createFeedback(server, project);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ archived: 'yes' }, 'archived'],
  ])('400 for %j', async (body, field) => {
    const project = await createProject(server, { plan: 'pro', name: 'unchanged' });
    const response = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringContaining(field), message: expect.stringContaining(field) });
    const read = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(read.body).toMatchObject({ name: 'unchanged', archived: false });
  });

  it('404 for an unknown project id', async () => {
    const account = await createAccount(server, 'pro');
    const response = await server.request('PATCH', `/api/v1/projects/${MISSING_ID}`, {
      bearer: account.adminToken,
      body: { name: 'x' },
    });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(errorBody);
  });
});

describe('POST /api/v1/projects/:id/api-keys (rotation)', () => {
  it('returns a new key; the old key is 401 at once and the new key works', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, project);
    const response = await server.request('POST', `/api/v1/projects/${project.id}/api-keys`, {
      bearer: project.account.adminToken,
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: project.id, api_key: expect.any(String) });
    const newKey: string = response.body.api_key;
    expect(newKey).not.toBe(project.apiKey);

    const old = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(old.status).toBe(401);
    expect(old.body).toEqual(errorBody);
    const fresh = await server.request('GET', '/api/v1/feedbacks', { apiKey: newKey });
    expect(fresh.status).toBe(200);
    expect(fresh.body.map((f: any) => f.id)).toEqual([item.id]);

    // The key is never shown again.
    const read = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(read.body).not.toHaveProperty('api_key');
  });

  it('rotating twice invalidates both earlier keys', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const rotate = () => server.request('POST', `/api/v1/projects/${project.id}/api-keys`, { bearer: project.account.adminToken });
    const second: string = (await rotate()).body.api_key;
    const third: string = (await rotate()).body.api_key;
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: second })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: third })).status).toBe(200);
  });
});

describe('project routes across accounts', () => {
  let owner: TestProject;
  let intruder: TestAccount;
  let feedbackId: string;
  beforeAll(async () => {
    owner = await createProject(server, { plan: 'pro', name: 'owned' });
    intruder = await createAccount(server, 'team');
    feedbackId = (await createFeedback(server, owner)).id;
  });

  const routes = (id: string): [string, string, unknown][] => [
    ['GET', `/api/v1/projects/${id}`, undefined],
    ['PATCH', `/api/v1/projects/${id}`, { name: 'hijacked' }],
    ['POST', `/api/v1/projects/${id}/api-keys`, undefined],
    ['GET', `/api/v1/projects/${id}/feedbacks`, undefined],
    ['PATCH', `/api/v1/projects/${id}/feedbacks/${feedbackId}`, { status: 'rejected' }],
    ['POST', `/api/v1/projects/${id}/feedbacks/${feedbackId}/merge`, { intoId: MISSING_ID }],
  ];

  it('another account token gets 403 on every /projects/:id route, and changes nothing', async () => {
    for (const [method, path, body] of routes(owner.id)) {
      const response = await server.request(method, path, { bearer: intruder.adminToken, body });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body).toEqual(errorBody);
    }
    const read = await server.request('GET', `/api/v1/projects/${owner.id}`, { bearer: owner.account.adminToken });
    expect(read.body.name).toBe('owned');
    // The key was not rotated and the item was not rejected.
    const item = await server.request('GET', `/api/v1/feedbacks/${feedbackId}`, { apiKey: owner.apiKey });
    expect(item.status).toBe(200);
    expect(item.body.status).toBe('pending');
  });

  it('a missing or invalid bearer gets 401 on every /projects/:id route', async () => {
    for (const [method, path, body] of routes(owner.id)) {
      for (const options of [{ body }, { body, bearer: 'fba_wrong' }]) {
        const response = await server.request(method, path, options);
        expect(response.status, `${method} ${path}`).toBe(401);
        expect(response.body).toEqual(errorBody);
      }
    }
  });

  it('an unknown project id is 404 on every /projects/:id route', async () => {
    for (const [method, path, body] of routes(MISSING_ID)) {
      const response = await server.request(method, path, { bearer: intruder.adminToken, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
  });
});
