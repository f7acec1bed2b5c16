import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { type HttpResponse, useTestServer } from '../helpers/server.js';

/*
 * Issue 33 §4 and docs/widget.md ("Anonymous visitors"): an anonymous submission held for the
 * owner's approval is its author's alone, on every client route; and a visitor's raw `anon-…` id,
 * their only credential with the publishable key, is never shown to anyone else.
 */

const server = useTestServer({ env: { RATE_LIMIT_ANONYMOUS: '200/h' } });
let project: TestProject & { publishableKey: string; identitySecret: string };

beforeAll(async () => {
  // Room for every anonymous action of this file in the per-IP anonymous budget.
  const base = await createProject(server, { plan: 'pro' });
  const secret = await server.request('POST', `/api/v1/projects/${base.id}/identity-secret`, { bearer: base.account.adminToken });
  expect(secret.status, JSON.stringify(secret.body)).toBe(200);
  project = { ...base, publishableKey: secret.body.publishable_key, identitySecret: secret.body.identity_secret };
  const settings = await server.request('PATCH', `/api/v1/projects/${base.id}`, {
    bearer: base.account.adminToken,
    body: { boardPublic: true, anonymousFeedback: true },
  });
  expect(settings.status, JSON.stringify(settings.body)).toBe(200);
});

const token = (sub: string) =>
  new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(project.identitySecret));

/** How a caller reaches the client routes: a key, and who they say or prove they are. */
type Caller = { apiKey: string; userId: string; headers: Record<string, string> };
const anonymous = (userId = `anon-${randomUUID()}`): Caller => ({
  apiKey: project.publishableKey,
  userId,
  headers: { 'X-User-Id': userId },
});
const signed = async (userId: string): Promise<Caller> => ({
  apiKey: project.publishableKey,
  userId,
  headers: { 'X-User-Token': await token(userId) },
});
const secretKey = (userId: string): Caller => ({ apiKey: project.apiKey, userId, headers: { 'X-User-Id': userId } });

const as = (caller: Caller) => ({
  get: (id: string) => server.request('GET', `/api/v1/feedbacks/${id}`, { apiKey: caller.apiKey, headers: caller.headers }),
  comments: (id: string) => server.request('GET', `/api/v1/feedbacks/${id}/comments`, { apiKey: caller.apiKey, headers: caller.headers }),
  vote: (id: string) =>
    server.request('POST', `/api/v1/feedbacks/${id}/votes`, {
      apiKey: caller.apiKey,
      headers: caller.headers,
      body: { userId: caller.userId },
    }),
  unvote: (id: string) =>
    server.request('DELETE', `/api/v1/feedbacks/${id}/votes`, {
      apiKey: caller.apiKey,
      headers: caller.headers,
      body: { userId: caller.userId },
    }),
  comment: (id: string, content = 'Hello') =>
    server.request('POST', `/api/v1/feedbacks/${id}/comments`, {
      apiKey: caller.apiKey,
      headers: caller.headers,
      body: { userId: caller.userId, content },
    }),
  submit: () =>
    server.request('POST', '/api/v1/feedbacks', {
      apiKey: caller.apiKey,
      headers: caller.headers,
      body: { title: 'Held idea', description: 'Posted without an account', category: 'feature_request', userId: caller.userId },
    }),
});

const ok = (response: HttpResponse) => {
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
};

/** The item as the owner sees it (admin token): counts that no refused request may have moved. */
async function ownerView(id: string) {
  const item = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks/${id}`, { bearer: project.account.adminToken });
  const comments = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks/${id}/comments`, {
    bearer: project.account.adminToken,
  });
  return { item: ok(item), comments: ok(comments) as { content: string }[] };
}

describe('a held anonymous submission (awaiting approval)', () => {
  it('answers 404 to every client route and every caller but its author; its owners still see it', async () => {
    const author = anonymous();
    const held = ok(await as(author).submit());
    expect(held.user_id).toBe(author.userId);

    const others: [string, Caller][] = [
      ['another anonymous visitor', anonymous()],
      ['a signed user', await signed(`user-${randomUUID().slice(0, 8)}`)],
      ['the secret key', secretKey(`server-${randomUUID().slice(0, 8)}`)],
    ];
    for (const [who, caller] of others) {
      for (const [route, response] of [
        ['get', await as(caller).get(held.id)],
        ['comments', await as(caller).comments(held.id)],
        ['vote', await as(caller).vote(held.id)],
        ['unvote', await as(caller).unvote(held.id)],
        ['comment', await as(caller).comment(held.id, `from ${who}`)],
      ] as const) {
        expect(response.status, `${who}, ${route}: ${JSON.stringify(response.body)}`).toBe(404);
        expectError(response, 404);
      }
    }
    // Nothing moved: the author's own vote, no comment.
    const before = await ownerView(held.id);
    expect(before.item).toMatchObject({ vote_count: 1, comment_count: 0 });

    // The author reads it, its comments, and comments on it.
    expect(ok(await as(author).get(held.id)).id).toBe(held.id);
    expect(ok(await as(author).comments(held.id))).toEqual([]);
    expect(ok(await as(author).comment(held.id, 'More detail')).content).toBe('More detail');
    const owner = await ownerView(held.id);
    expect(owner.item).toMatchObject({ vote_count: 1, comment_count: 1 });
    expect(owner.comments.map((c) => c.content)).toEqual(['More detail']);

    // Approved, it is everyone's.
    ok(await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${held.id}/approve`, { bearer: project.account.adminToken }));
    const [, signedUser] = others[1] as [string, Caller];
    expect(ok(await as(signedUser).vote(held.id)).vote_count).toBe(2);
    expect(ok(await as(signedUser).comments(held.id))).toHaveLength(1);
  });
});

describe('anonymous ids in public answers (docs/widget.md)', () => {
  it('are shown as a visitor-… alias to everyone but the visitor, so nobody can act as them', async () => {
    const visitor = anonymous();
    const item = ok(await as(visitor).submit());
    ok(await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${item.id}/approve`, { bearer: project.account.adminToken }));
    ok(await as(visitor).comment(item.id, 'My own words'));

    const reader = anonymous();
    const readers: Caller[] = [reader, await signed('someone'), secretKey('a-server')];
    const aliases = new Set<string>();
    for (const caller of readers) {
      const comments = ok(await as(caller).comments(item.id));
      const feedback = ok(await as(caller).get(item.id));
      const list = ok(await server.request('GET', '/api/v1/feedbacks', { apiKey: caller.apiKey, headers: caller.headers }));
      for (const text of [comments, feedback, list].map((body) => JSON.stringify(body))) expect(text).not.toContain(visitor.userId);
      expect(comments[0].user_id).toMatch(/^visitor-[0-9a-f]{16}$/);
      expect(feedback.user_id).toBe(comments[0].user_id);
      aliases.add(comments[0].user_id);
    }
    // One alias per visitor, whoever reads; another visitor gets another one.
    expect(aliases.size).toBe(1);
    const [alias] = [...aliases] as [string];
    ok(await as(reader).comment(item.id, 'A reply'));
    const seen = ok(await as(visitor).comments(item.id));
    expect(seen.map((c: { user_id: string }) => c.user_id)).toEqual([visitor.userId, expect.stringMatching(/^visitor-/)]);
    expect(seen[1].user_id).not.toBe(alias);

    // The alias cannot act with the publishable key.
    expectError(await as(anonymous(alias)).comment(item.id, 'impersonation'), 400, 'userId');
  });
});
