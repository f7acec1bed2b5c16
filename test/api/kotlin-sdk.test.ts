import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { assertDocumented } from '../helpers/openapi-validator.js';
import { type RawResponse, rawRequest } from '../helpers/raw-http.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The origin project's Kotlin SDK (SwiftlyFeedbackKit-Kotlin-SDK 1.1.1, commit de5fc764…; see
 * docs/clients.md) against this service, with only its base URL changed. There is no Kotlin
 * toolchain here, so each of its 15 public calls is replayed as the bytes it puts on the wire,
 * read from its sources (http/FeedbackKitHttpClient.kt, api/*.kt, models/*.kt):
 *
 * - OkHttp 4.12: the SDK's interceptor adds Content-Type: application/json, Accept, X-API-Key and
 *   X-User-Id (from the config) to every request, and each get/post/delete adds X-User-Id again:
 *   configured as its README shows (with a userId), X-User-Id is sent twice with the same value.
 *   OkHttp's bridge then sets the body's Content-Type (application/json; charset=utf-8) on a POST;
 *   a DELETE carries OkHttp's empty body: Content-Length: 0, and the interceptor's Content-Type.
 * - kotlinx.serialization with encodeDefaults: every property of a request model is sent, nulls
 *   included, in declaration order, under its @SerialName.
 * - Answers are decoded with ignoreUnknownKeys and coerceInputValues: a missing required field,
 *   or one of the wrong type, makes the call throw. `decode` below checks exactly that, model by
 *   model.
 * - Errors: the SDK shows `message`, else `error` (a primitive: "true"), else `reason`.
 */

const server = useTestServer();
let project: TestProject;
let host: string;
beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
  host = new URL(server.url).host;
});

/** FeedbackKitConfig.apiUrl: the base URL plus /api/v1. */
const API = '/api/v1';

/** The request OkHttp writes for one of the SDK's calls (see the header comment). */
function okHttpRequest(method: 'GET' | 'POST' | 'DELETE', target: string, userId: string, json?: unknown): string {
  const body = json === undefined ? undefined : JSON.stringify(json);
  const lines = [`${method} ${target} HTTP/1.1`, `X-User-Id: ${userId}`];
  if (body === undefined) lines.push('Content-Type: application/json');
  lines.push('Accept: application/json', `X-API-Key: ${project.apiKey}`, `X-User-Id: ${userId}`);
  if (body !== undefined) lines.push('Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(body)}`);
  else if (method === 'DELETE') lines.push('Content-Length: 0');
  lines.push(`Host: ${host}`, 'Connection: Keep-Alive', 'Accept-Encoding: gzip', 'User-Agent: okhttp/4.12.0');
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`;
}

/** Java's URLEncoder, as FeedbackKitHttpClient.buildUrl encodes query parameters. */
const urlEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
const withQuery = (path: string, query: [string, string][]) =>
  query.length === 0 ? path : `${path}?${query.map(([k, v]) => `${urlEncode(k)}=${urlEncode(v)}`).join('&')}`;

/** Sends the SDK's request; the answer must also be one the OpenAPI document describes. */
async function sdkCall(method: 'GET' | 'POST' | 'DELETE', target: string, userId: string, json?: unknown): Promise<RawResponse> {
  const response = await rawRequest(server.url, okHttpRequest(method, target, userId, json));
  assertDocumented({ method, path: target, status: response.status, headers: response.headers, text: response.text });
  return response;
}

// The SDK's response models (models/*.kt), as kotlinx.serialization decodes them.

type Kind = 'string' | 'int' | 'boolean' | 'status' | 'category' | 'stringMap';
type Field = { kind: Kind; required: boolean };
type Model = Record<string, Field>;
const req = (kind: Kind): Field => ({ kind, required: true });
const opt = (kind: Kind): Field => ({ kind, required: false });

const STATUSES = ['pending', 'approved', 'in_progress', 'testflight', 'completed', 'rejected'];
const CATEGORIES = ['feature_request', 'bug_report', 'improvement', 'other'];

/** Feedback.kt */
const Feedback: Model = {
  id: req('string'),
  title: req('string'),
  description: req('string'),
  status: req('status'),
  category: req('category'),
  vote_count: req('int'),
  has_voted: req('boolean'),
  comment_count: req('int'),
  created_at: req('string'),
  updated_at: opt('string'),
  user_id: opt('string'),
  email: opt('string'),
  is_hidden_over_limit: opt('boolean'),
};
/** Comment.kt (`is_official` has a default, so it may be absent). */
const Comment: Model = {
  id: req('string'),
  feedback_id: req('string'),
  content: req('string'),
  user_id: opt('string'),
  user_name: opt('string'),
  is_official: opt('boolean'),
  created_at: req('string'),
  updated_at: opt('string'),
};
/** VoteResponse.kt */
const VoteResponse: Model = { success: req('boolean'), vote_count: req('int'), has_voted: req('boolean') };
/** SdkUser.kt */
const SdkUser: Model = {
  id: req('string'),
  email: opt('string'),
  name: opt('string'),
  external_id: opt('string'),
  metadata: opt('stringMap'),
  created_at: opt('string'),
};
/** TrackedEvent.kt: TrackEventResponse */
const TrackEventResponse: Model = { success: req('boolean'), event_id: opt('string') };

function fits(kind: Kind, value: unknown): boolean {
  switch (kind) {
    case 'string':
      return typeof value === 'string';
    case 'int':
      return Number.isInteger(value) && Math.abs(value as number) <= 2 ** 31 - 1;
    case 'boolean':
      return typeof value === 'boolean';
    case 'status':
      return STATUSES.includes(value as string);
    case 'category':
      return CATEGORIES.includes(value as string);
    case 'stringMap':
      return typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
  }
}

/**
 * What kotlinx.serialization would make of `value` as `model` (ignoreUnknownKeys,
 * coerceInputValues): the problems that make the SDK's decodeFromString throw, none when it decodes.
 */
function decodeProblems(model: Model, value: unknown, where = '$'): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where}: not an object`];
  const problems: string[] = [];
  for (const [name, field] of Object.entries(model)) {
    const got = (value as Record<string, unknown>)[name];
    // A null for a non-null property with a default is coerced to the default; without one it throws.
    if (got === undefined || got === null) {
      if (field.required) problems.push(`${where}.${name}: required ${field.kind}, ${got === null ? 'null' : 'missing'}`);
      continue;
    }
    if (!fits(field.kind, got)) problems.push(`${where}.${name}: not a ${field.kind}: ${JSON.stringify(got)}`);
  }
  return problems;
}

function expectDecodes(model: Model, response: RawResponse) {
  expect(response.status, response.text).toBe(200);
  expect(decodeProblems(model, response.body), response.text).toEqual([]);
  return response.body;
}

function expectDecodesList(model: Model, response: RawResponse) {
  expect(response.status, response.text).toBe(200);
  expect(Array.isArray(response.body), response.text).toBe(true);
  const problems = (response.body as unknown[]).flatMap((item, i) => decodeProblems(model, item, `$[${i}]`));
  expect(problems, response.text).toEqual([]);
  return response.body as any[];
}

/** FeedbackKitHttpClient.extractErrorMessage: `message`, else `error` as a primitive, else `reason`. */
function kotlinErrorText(body: any): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  for (const key of ['message', 'error', 'reason']) {
    const value = body[key];
    if (value !== undefined && value !== null && typeof value !== 'object') return String(value);
  }
  return undefined;
}

const userIdOf = () => `kotlin-${randomUUID().slice(0, 8)}`;

/** FeedbackApi.create: a CreateFeedbackRequest with the client's user id copied in. */
function createFeedbackBody(userId: string, fields: { email?: string | null; subscribe?: boolean | null; types?: string[] | null } = {}) {
  return {
    title: 'Offline mode',
    description: 'Keep my drafts when the train enters a tunnel.',
    category: 'feature_request',
    email: fields.email ?? null,
    user_id: userId,
    subscribeToMailingList: fields.subscribe ?? null,
    mailingListEmailTypes: fields.types ?? null,
  };
}

async function newItem(userId: string) {
  return expectDecodes(Feedback, await sdkCall('POST', `${API}/feedbacks`, userId, createFeedbackBody(userId)));
}

describe('the origin Kotlin SDK 1.1.1, call by call, with only its base URL changed', () => {
  it('FeedbackApi.create(request): POST /feedbacks with `email` and `user_id`; the email is kept as user_email', async () => {
    const userId = userIdOf();
    const item = expectDecodes(
      Feedback,
      await sdkCall('POST', `${API}/feedbacks`, userId, createFeedbackBody(userId, { email: 'ann@example.com' })),
    );
    expect(item).toMatchObject({ user_id: userId, user_email: 'ann@example.com', vote_count: 1, has_voted: true });
  });

  it('FeedbackApi.create(title, description, category, email, subscribeToMailingList, mailingListEmailTypes)', async () => {
    const userId = userIdOf();
    const body = createFeedbackBody(userId, { email: 'bo@example.com', subscribe: true, types: ['operational', 'marketing'] });
    const item = expectDecodes(Feedback, await sdkCall('POST', `${API}/feedbacks`, userId, body));
    expect(item).toMatchObject({ title: 'Offline mode', user_email: 'bo@example.com' });
  });

  it('FeedbackApi.list(options): GET /feedbacks?status=…&category=…&page=…&per_page=…&user_id=…', async () => {
    const userId = userIdOf();
    const item = await newItem(userId);
    const target = withQuery(`${API}/feedbacks`, [
      ['status', 'pending'],
      ['category', 'feature_request'],
      ['page', '1'],
      ['per_page', '20'],
      ['user_id', userId],
    ]);
    const list = expectDecodesList(Feedback, await sdkCall('GET', target, userId));
    expect(list.find((f) => f.id === item.id)).toMatchObject({ has_voted: true, status: 'pending' });
  });

  it('FeedbackApi.get(id): GET /feedbacks/:id?user_id=…', async () => {
    const userId = userIdOf();
    const item = await newItem(userId);
    const got = expectDecodes(Feedback, await sdkCall('GET', withQuery(`${API}/feedbacks/${item.id}`, [['user_id', userId]]), userId));
    expect(got).toMatchObject({ id: item.id, has_voted: true });
  });

  it('VotesApi.vote: POST /feedbacks/:id/votes {userId, notifyOnStatusChange, …}; the answer carries success: true', async () => {
    const item = await newItem(userIdOf());
    const voter = userIdOf();
    const body = { userId: voter, notifyOnStatusChange: true, subscribeToMailingList: null, mailingListEmailTypes: null };
    const vote = expectDecodes(VoteResponse, await sdkCall('POST', `${API}/feedbacks/${item.id}/votes`, voter, body));
    expect(vote).toMatchObject({ success: true, vote_count: 2, has_voted: true, feedback_id: item.id });
    // A second vote is a 409 whose text the SDK shows from `message`.
    const again = await sdkCall('POST', `${API}/feedbacks/${item.id}/votes`, voter, body);
    expect(again.status).toBe(409);
    expect(kotlinErrorText(again.body)).toBe(again.body.reason);
  });

  it('VotesApi.unvote: DELETE /feedbacks/:id/votes?user_id=… with no body takes the user from the query', async () => {
    const item = await newItem(userIdOf());
    const voter = userIdOf();
    await sdkCall('POST', `${API}/feedbacks/${item.id}/votes`, voter, { userId: voter, notifyOnStatusChange: false });
    const unvote = expectDecodes(
      VoteResponse,
      await sdkCall('DELETE', withQuery(`${API}/feedbacks/${item.id}/votes`, [['user_id', voter]]), voter),
    );
    expect(unvote).toMatchObject({ success: true, vote_count: 1, has_voted: false });
  });

  it('VotesApi.toggleVote: a vote when hasVoted is false, an unvote when it is true', async () => {
    const item = await newItem(userIdOf());
    const voter = userIdOf();
    const on = await sdkCall('POST', `${API}/feedbacks/${item.id}/votes`, voter, {
      userId: voter,
      notifyOnStatusChange: false,
      subscribeToMailingList: null,
      mailingListEmailTypes: null,
    });
    expect(expectDecodes(VoteResponse, on)).toMatchObject({ vote_count: 2, has_voted: true });
    const off = await sdkCall('DELETE', withQuery(`${API}/feedbacks/${item.id}/votes`, [['user_id', voter]]), voter);
    expect(expectDecodes(VoteResponse, off)).toMatchObject({ vote_count: 1, has_voted: false });
  });

  it('CommentsApi.create(feedbackId, request): POST /feedbacks/:id/comments {content, user_id, user_name}; the answer carries feedback_id', async () => {
    const item = await newItem(userIdOf());
    const userId = userIdOf();
    const body = { content: 'Same here on Android.', user_id: userId, user_name: 'Ann' };
    const comment = expectDecodes(Comment, await sdkCall('POST', `${API}/feedbacks/${item.id}/comments`, userId, body));
    expect(comment).toMatchObject({ feedback_id: item.id, content: 'Same here on Android.', user_id: userId });
  });

  it('CommentsApi.create(feedbackId, content, userName = null)', async () => {
    const item = await newItem(userIdOf());
    const userId = userIdOf();
    const body = { content: 'Me too', user_id: userId, user_name: null };
    expect(expectDecodes(Comment, await sdkCall('POST', `${API}/feedbacks/${item.id}/comments`, userId, body))).toMatchObject({
      feedback_id: item.id,
    });
  });

  it('CommentsApi.list(feedbackId, page, perPage): GET /feedbacks/:id/comments?page=…&per_page=…', async () => {
    const item = await newItem(userIdOf());
    const userId = userIdOf();
    await sdkCall('POST', `${API}/feedbacks/${item.id}/comments`, userId, { content: 'First', user_id: userId, user_name: null });
    const target = withQuery(`${API}/feedbacks/${item.id}/comments`, [
      ['page', '1'],
      ['per_page', '50'],
    ]);
    const list = expectDecodesList(Comment, await sdkCall('GET', target, userId));
    expect(list.map((c) => [c.feedback_id, c.content])).toEqual([[item.id, 'First']]);
  });

  it('UsersApi.register(request): POST /users/register {email, name, external_id, metadata}: external_id is the user id', async () => {
    const userId = userIdOf();
    const body = { email: 'cy@example.com', name: 'Cy', external_id: userId, metadata: { plan: 'gold' } };
    const user = expectDecodes(SdkUser, await sdkCall('POST', `${API}/users/register`, userId, body));
    expect(user).toMatchObject({ user_id: userId, external_id: userId, email: 'cy@example.com', name: 'Cy' });
    // metadata does not fit the SDK user (docs/clients.md): ignored, not echoed.
    expect(user).not.toHaveProperty('metadata');
  });

  it('UsersApi.register(email, name, externalId, metadata = null)', async () => {
    const userId = userIdOf();
    const body = { email: null, name: 'Dee', external_id: userId, metadata: null };
    expect(expectDecodes(SdkUser, await sdkCall('POST', `${API}/users/register`, userId, body))).toMatchObject({
      external_id: userId,
      name: 'Dee',
      email: null,
    });
  });

  it('UsersApi.register(email, name) without externalId registers the user of X-User-Id, and getCurrentUser then finds them', async () => {
    const userId = userIdOf();
    const body = { email: 'flo@example.com', name: 'Flo', external_id: null, metadata: null };
    expect(expectDecodes(SdkUser, await sdkCall('POST', `${API}/users/register`, userId, body))).toMatchObject({
      user_id: userId,
      external_id: userId,
      email: 'flo@example.com',
      name: 'Flo',
    });
    expect(expectDecodes(SdkUser, await sdkCall('GET', `${API}/users/${userId}`, userId))).toMatchObject({ user_id: userId });
    // A body and headers that name nobody are still refused, naming the field.
    const nobody = await server.request('POST', `${API}/users/register`, {
      apiKey: project.apiKey,
      body: { email: null, external_id: null },
    });
    expect([nobody.status, nobody.body]).toMatchObject([400, { error: true, reason: 'userId: is required' }]);
  });

  it('UsersApi.getCurrentUser: GET /users/:userId answers the user, and never their email or MRR to the API key alone', async () => {
    const userId = userIdOf();
    await sdkCall('POST', `${API}/users/register`, userId, { email: 'eve@example.com', name: 'Eve', external_id: userId, metadata: null });
    // The app's server sets MRR with the secret key, as SPEC 4.8 does.
    await server.request('POST', `${API}/users/register`, { apiKey: project.apiKey, body: { userId, mrr: 99, email: 'eve@example.com' } });
    const user = expectDecodes(SdkUser, await sdkCall('GET', `${API}/users/${userId}`, userId));
    expect(user).toMatchObject({ user_id: userId, external_id: userId });
    expect(user).not.toHaveProperty('email');
    expect(user).not.toHaveProperty('name');
    expect(user).not.toHaveProperty('mrr');
  });

  // The track call sends `name` for the event name and decodes `success`: the events routes
  // (src/api/events/**) are another engineer's, who adds that alias. Replayed here as the SDK sends
  // it, skipped until that lands; un-skip it then (docs/clients.md lists it).
  it('EventsApi.track(event) and track(name, properties): POST /events/track {name, properties, user_id, timestamp}', async () => {
    const userId = userIdOf();
    for (const body of [
      { name: 'paywall_shown', properties: { variant: 'b' }, user_id: userId, timestamp: null },
      { name: 'paywall_closed', properties: null, user_id: userId, timestamp: null },
    ]) {
      const tracked = expectDecodes(TrackEventResponse, await sdkCall('POST', `${API}/events/track`, userId, body));
      expect(tracked.success).toBe(true);
    }
  });
});

describe('GET /users/:userId: who may read which fields (docs/clients.md)', () => {
  let web: TestProject & { identitySecret: string };
  beforeAll(async () => {
    const base = await createProject(server, { plan: 'pro' });
    const secret = await server.request('POST', `${API}/projects/${base.id}/identity-secret`, { bearer: base.account.adminToken });
    expect(secret.status, JSON.stringify(secret.body)).toBe(200);
    web = { ...base, identitySecret: secret.body.identity_secret };
  });
  const token = (sub: string) =>
    new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(web.identitySecret));
  const read = (userId: string, headers: Record<string, string> = {}) =>
    server.request('GET', `${API}/users/${encodeURIComponent(userId)}`, { apiKey: web.apiKey, headers });

  it('the user’s own signed token reads the whole record: email, name and MRR', async () => {
    const userId = userIdOf();
    await server.request('POST', `${API}/users/register`, {
      apiKey: web.apiKey,
      body: { userId, mrr: 12.5, email: 'fay@example.com', name: 'Fay' },
    });
    const own = await read(userId, { 'X-User-Token': await token(userId) });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body).toMatchObject({ user_id: userId, external_id: userId, email: 'fay@example.com', name: 'Fay', mrr: 12.5 });
  });

  it('another user’s token is a 403; the key alone gets no email, name or MRR; an unknown user is a 404', async () => {
    const userId = userIdOf();
    await server.request('POST', `${API}/users/register`, { apiKey: web.apiKey, body: { userId, mrr: 7, email: 'gil@example.com' } });
    const other = await read(userId, { 'X-User-Token': await token('someone-else') });
    expect(other.status).toBe(403);
    expect(other.body.message).toBe(other.body.reason);
    const keyOnly = await read(userId, { 'X-User-Id': userId });
    expect(keyOnly.status).toBe(200);
    expect(Object.keys(keyOnly.body).sort()).toEqual(['external_id', 'first_seen_at', 'id', 'last_seen_at', 'user_id']);
    expect((await read('never-registered')).status).toBe(404);
  });

  it('registering a user’s id with the key never answers the email stored for them', async () => {
    const userId = userIdOf();
    await server.request('POST', `${API}/users/register`, { apiKey: web.apiKey, body: { userId, email: 'hal@example.com' } });
    const again = await server.request('POST', `${API}/users/register`, { apiKey: web.apiKey, body: { userId } });
    expect(again.status).toBe(200);
    expect(again.body.email).toBeNull();
    // Kept all the same: a SPEC registration (no email field) does not clear it.
    const own = await read(userId, { 'X-User-Token': await token(userId) });
    expect(own.body.email).toBe('hal@example.com');
  });
});

describe('the aliases are additive and never guess (docs/clients.md)', () => {
  const post = (path: string, body: unknown) => server.request('POST', `${API}${path}`, { apiKey: project.apiKey, body });

  it('`email` beside a different `userEmail` is a 400 naming both; equal, it is one field', async () => {
    const base = { title: 'Both', description: 'Two emails', category: 'other', userId: userIdOf() };
    const clash = await post('/feedbacks', { ...base, userEmail: 'a@example.com', email: 'b@example.com' });
    expect(clash.status).toBe(400);
    expect(clash.body.reason).toBe('userEmail: must be given once: userEmail and email disagree');
    const same = await post('/feedbacks', { ...base, userEmail: 'a@example.com', email: 'a@example.com' });
    expect(same.status).toBe(200);
    expect(same.body.user_email).toBe('a@example.com');
  });

  it('`notifyOnStatusChange` is stored as `notifyStatusChange`', async () => {
    const item = await newItem(userIdOf());
    const voter = userIdOf();
    expect((await post(`/feedbacks/${item.id}/votes`, { userId: voter, notifyOnStatusChange: true })).status).toBe(200);
    const [vote] = await server.sql`select notify_status_change from votes where feedback_id = ${item.id} and user_id = ${voter}`;
    expect(vote?.notify_status_change).toBe(true);
  });

  it('DELETE with a body naming one user and a query naming another is a 400; without either, a 400 as before', async () => {
    const item = await newItem(userIdOf());
    const unvote = (target: string, body?: unknown) =>
      server.request('DELETE', `${API}/feedbacks/${item.id}/votes${target}`, { apiKey: project.apiKey, ...(body ? { body } : {}) });
    const clash = await unvote('?user_id=one', { userId: 'two' });
    expect(clash.status).toBe(400);
    expect(clash.body.reason).toContain('user_id');
    expect((await unvote('?user_id=one', { userId: 'one' })).status).toBe(200);
    expect((await unvote('?userId=one')).status).toBe(200);
    const neither = await unvote('');
    expect(neither.status).toBe(400);
    expect(neither.body.message).toBe(neither.body.reason);
  });
});
