import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

const server = useTestServer({ env: { RATE_LIMIT_ANONYMOUS: '4/h' } });
beforeAll(async () => {
  // A small anonymous budget, so the per-IP limit is reached within the test.
});

type WebProject = TestProject & { publishableKey: string; identitySecret: string };

async function webProject(plan: 'free' | 'pro' | 'team' = 'pro'): Promise<WebProject> {
  const project = await createProject(server, { plan });
  const response = await server.request('POST', `/api/v1/projects/${project.id}/identity-secret`, { bearer: project.account.adminToken });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.identity_secret).toMatch(/^fbid_/);
  expect(response.body.publishable_key).toMatch(/^pk_[0-9a-f]{32}$/);
  return { ...project, publishableKey: response.body.publishable_key, identitySecret: response.body.identity_secret };
}

/** A user token as the host app's server signs it (docs/widget.md). */
async function signToken(secret: string, claims: Record<string, unknown>, expiresIn: string | number = '1h') {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret));
}

const settings = (project: TestProject, body: Record<string, unknown>) =>
  server.request('PATCH', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken, body });

const feedbackBody = (userId: string) => ({ title: 'Widget idea', description: 'From a web page', category: 'feature_request', userId });

describe('project keys for web pages', () => {
  it('shows the publishable key and identity settings in GET /projects/:id, never the identity secret', async () => {
    const project = await webProject();
    const response = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      publishable_key: project.publishableKey,
      has_identity_secret: true,
      require_signed_identity: false,
      board_public: false,
      anonymous_feedback: false,
    });
    expect(response.body.slug).toMatch(/^project-[0-9a-f]{8}-[0-9a-f]{8}$/);
    expect(JSON.stringify(response.body)).not.toContain(project.identitySecret);
  });

  it('refuses the publishable key with 403 on /metrics/summary and POST /users/register', async () => {
    const project = await webProject();
    expectError(await server.request('GET', '/api/v1/metrics/summary', { apiKey: project.publishableKey }), 403, 'publishable');
    const register = await server.request('POST', '/api/v1/users/register', {
      apiKey: project.publishableKey,
      body: { userId: 'u1', mrr: 10 },
    });
    expectError(register, 403, 'publishable');
  });

  it('accepts the publishable key for reading feedback and tracking events', async () => {
    const project = await webProject();
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.publishableKey })).status).toBe(200);
    const track = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.publishableKey,
      body: { eventName: 'feedback_list', userId: `anon-${randomUUID()}` },
    });
    expect(track.status, JSON.stringify(track.body)).toBe(200);
  });

  it('the publishable key tracks only the predefined events, as the token’s user or an anon-… visitor (docs/widget.md)', async () => {
    const project = await webProject();
    const pk = (body: unknown, headers: Record<string, string> = {}) =>
      server.request('POST', '/api/v1/events/track', { apiKey: project.publishableKey, headers, body });
    const token = await signToken(project.identitySecret, { sub: 'signed-1' });
    expect((await pk({ eventName: 'feedback_detail', userId: 'signed-1' }, { 'X-User-Token': token })).status).toBe(200);
    expectError(await pk({ eventName: 'purchase', userId: `anon-${randomUUID()}` }), 403, 'predefined');
    expectError(await pk({ eventName: 'feedback_list', userId: 'someone-else' }), 403, 'userId');
    expectError(await pk({ eventName: 'feedback_list', userId: 'someone-else' }, { 'X-User-Token': token }), 403, 'userId');
    // In a batch the refused event is `rejected` with the reason, and the others are stored.
    const batch = await server.request('POST', '/api/v1/events/batch', {
      apiKey: project.publishableKey,
      body: {
        events: [
          { eventName: 'purchase', userId: 'anon-12345678' },
          { eventName: 'feedback_list', userId: 'anon-12345678' },
        ],
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect(batch.body.results[0]).toMatchObject({ status: 'rejected', reason: expect.stringContaining('predefined') });
    expect(batch.body.results[1]).toMatchObject({ status: 'accepted' });
    // The secret key is not limited.
    const secret = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'purchase', userId: 'someone-else' },
    });
    expect(secret.status).toBe(200);
  });

  it('rotating the publishable key stops the old one at once', async () => {
    const project = await webProject();
    const rotated = await server.request('POST', `/api/v1/projects/${project.id}/publishable-key`, { bearer: project.account.adminToken });
    expect(rotated.status).toBe(200);
    expect(rotated.body.publishable_key).not.toBe(project.publishableKey);
    expectError(await server.request('GET', '/api/v1/feedbacks', { apiKey: project.publishableKey }), 401);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: rotated.body.publishable_key })).status).toBe(200);
  });
});

describe('signed identity (X-User-Token)', () => {
  it('acts as the token’s user with the publishable key, and takes the SDK user’s MRR from the token', async () => {
    const project = await webProject();
    const userId = `u-${randomUUID()}`;
    const token = await signToken(project.identitySecret, { sub: userId, email: 'ada@example.com', mrr: 42.5 });
    const created = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.publishableKey,
      headers: { 'X-User-Token': token },
      body: feedbackBody(userId),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.total_mrr).toBe(42.5);
    const users = await server.request('GET', `/api/v1/projects/${project.id}/users`, { bearer: project.account.adminToken });
    expect(users.body.users.find((u: { user_id: string }) => u.user_id === userId)?.mrr).toBe(42.5);
    // has_voted follows the token's user.
    const read = await server.request('GET', `/api/v1/feedbacks/${created.body.id}`, {
      apiKey: project.publishableKey,
      headers: { 'X-User-Token': token },
    });
    expect(read.body.has_voted).toBe(true);
  });

  it('refuses a token signed with another secret, an expired token, and one living over 30 days, each with 401', async () => {
    const project = await webProject();
    const other = await webProject();
    const cases = [
      await signToken(other.identitySecret, { sub: 'u1' }),
      await signToken(project.identitySecret, { sub: 'u1' }, Math.floor(Date.now() / 1000) - 3600),
      await signToken(project.identitySecret, { sub: 'u1' }, '40d'),
      'not-a-jwt',
    ];
    for (const token of cases) {
      const response = await server.request('POST', '/api/v1/feedbacks', {
        apiKey: project.apiKey,
        headers: { 'X-User-Token': token },
        body: feedbackBody('u1'),
      });
      expectError(response, 401, 'X-User-Token');
    }
  });

  it('answers 403 when the body’s userId differs from the token’s sub, over plain HTTP with either key', async () => {
    const project = await webProject();
    const token = await signToken(project.identitySecret, { sub: 'alice' });
    for (const apiKey of [project.apiKey, project.publishableKey]) {
      const response = await server.request('POST', '/api/v1/feedbacks', {
        apiKey,
        headers: { 'X-User-Token': token },
        body: feedbackBody('mallory'),
      });
      expectError(response, 403, 'userId');
    }
  });
});

describe('require_signed_identity', () => {
  it('refuses every write that acts as a user without a token (401) and still serves reads', async () => {
    const project = await webProject();
    const item = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, body: feedbackBody('early-user') });
    expect(item.status).toBe(200);
    expect((await settings(project, { require_signed_identity: true })).body.require_signed_identity).toBe(true);

    const id = item.body.id;
    const writes: [string, string, unknown][] = [
      ['POST', '/api/v1/feedbacks', feedbackBody('u2')],
      ['POST', `/api/v1/feedbacks/${id}/votes`, { userId: 'u2' }],
      ['DELETE', `/api/v1/feedbacks/${id}/votes`, { userId: 'early-user' }],
      ['POST', `/api/v1/feedbacks/${id}/comments`, { userId: 'u2', content: 'hi' }],
      ['POST', '/api/v1/users/register', { userId: 'u2', mrr: 5 }],
    ];
    for (const [method, path, body] of writes) {
      expectError(await server.request(method, path, { apiKey: project.apiKey, body }), 401, 'X-User-Token');
    }
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).status).toBe(200);
    expect((await server.request('GET', `/api/v1/feedbacks/${id}/comments`, { apiKey: project.apiKey })).status).toBe(200);

    const token = await signToken(project.identitySecret, { sub: 'u2' });
    const vote = await server.request('POST', `/api/v1/feedbacks/${id}/votes`, {
      apiKey: project.apiKey,
      headers: { 'X-User-Token': token },
      body: { userId: 'u2' },
    });
    expect(vote.status, JSON.stringify(vote.body)).toBe(200);
  });
});

describe('anonymous feedback on a public board', () => {
  it('is refused with the publishable key and no token until the owner turns it on', async () => {
    const project = await webProject();
    const response = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.publishableKey,
      body: feedbackBody(`anon-${randomUUID()}`),
    });
    expectError(response, 401, 'X-User-Token');
  });

  it('keeps an anonymous submission out of public view until an owner approves it', async () => {
    const project = await webProject();
    await settings(project, { board_public: true, anonymous_feedback: true });
    const anon = `anon-${randomUUID()}`;
    const created = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.publishableKey, body: feedbackBody(anon) });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const publicList = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.publishableKey });
    expect(publicList.body.map((f: { id: string }) => f.id)).not.toContain(created.body.id);
    expectError(await server.request('GET', `/api/v1/feedbacks/${created.body.id}`, { apiKey: project.apiKey }), 404);

    const queue = await server.request('GET', `/api/v1/projects/${project.id}/moderation`, { bearer: project.account.adminToken });
    expect(queue.body.map((f: { id: string }) => f.id)).toEqual([created.body.id]);
    const approved = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${created.body.id}/approve`, {
      bearer: project.account.adminToken,
    });
    expect(approved.status).toBe(200);
    const after = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.publishableKey });
    expect(after.body.map((f: { id: string }) => f.id)).toContain(created.body.id);
  });

  it('refuses a filled honeypot field and an anonymous id of the wrong shape with 400', async () => {
    const project = await webProject();
    await settings(project, { anonymous_feedback: true });
    const honeypot = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.publishableKey,
      body: { ...feedbackBody(`anon-${randomUUID()}`), website: 'http://spam.example' },
    });
    expectError(honeypot, 400, 'website');
    expectError(
      await server.request('POST', '/api/v1/feedbacks', { apiKey: project.publishableKey, body: feedbackBody('admin') }),
      400,
      'userId',
    );
  });

  it('limits anonymous actions per IP with 429 and Retry-After', async () => {
    const project = await webProject();
    await settings(project, { anonymous_feedback: true });
    const item = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, body: feedbackBody('owner-side') });
    const statuses: number[] = [];
    let last: Awaited<ReturnType<TestServer['request']>> | undefined;
    for (let i = 0; i < 6; i++) {
      last = await server.request('POST', `/api/v1/feedbacks/${item.body.id}/votes`, {
        apiKey: project.publishableKey,
        body: { userId: `anon-${randomUUID()}` },
      });
      statuses.push(last.status);
    }
    // The budget is per address across projects in this process: earlier tests may have spent some.
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(4);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('describes a public board at GET /boards/:slug only while board_public is on', async () => {
    const project = await webProject();
    const { body } = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expectError(await server.request('GET', `/api/v1/boards/${body.slug}`), 404);
    await settings(project, { board_public: true });
    const board = await server.request('GET', `/api/v1/boards/${body.slug}`);
    expect(board.status).toBe(200);
    expect(board.body).toEqual({
      name: project.name,
      slug: body.slug,
      publishable_key: project.publishableKey,
      anonymous_feedback: false,
      require_signed_identity: false,
    });
  });
});
