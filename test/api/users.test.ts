import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { sleep } from '../helpers/eventually.js';
import { expectError } from '../helpers/expect.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** SPEC 2.6's fields, and those the origin's Kotlin SDK reads (docs/clients.md): external_id, email, name. */
const SDK_USER_FIELDS = ['id', 'user_id', 'external_id', 'mrr', 'email', 'name', 'first_seen_at', 'last_seen_at'].sort();

/** Every error outside the metrics API has the SPEC 7.1 body `{ error: true, reason }`. */

const register = (project: TestProject, body: unknown) =>
  server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body });

async function registerOk(project: TestProject, body: unknown) {
  const response = await register(project, body);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** RFC 3339 in whole seconds, UTC, as the origin sent it (its Swift SDK decodes no fraction). */
const isIsoTimestamp = (value: unknown) =>
  typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(value) && !Number.isNaN(Date.parse(value));
const newUserId = () => `sdk-${randomUUID()}`;

describe('POST /users/register', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('creates the SDK user and returns exactly the SDK user of SPEC 2.6: {id, user_id, mrr, first_seen_at, last_seen_at}', async () => {
    const userId = newUserId();
    const body = await registerOk(project, { userId, mrr: 49.99 });
    expect(Object.keys(body).sort()).toEqual(SDK_USER_FIELDS);
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      user_id: userId,
      external_id: userId,
      mrr: 49.99,
      email: null,
      name: null,
      first_seen_at: expect.any(String),
      last_seen_at: expect.any(String),
    });
    expect(isIsoTimestamp(body.first_seen_at)).toBe(true);
    expect(isIsoTimestamp(body.last_seen_at)).toBe(true);
    expect(Date.parse(body.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(body.first_seen_at));
  });

  it('mrr is optional: a user registered without it has mrr null', async () => {
    const body = await registerOk(project, { userId: newUserId() });
    expect(body.mrr).toBeNull();
  });

  it('when the user exists, updates last_seen_at and mrr: same id, first_seen_at unchanged, last_seen_at not earlier', async () => {
    const userId = newUserId();
    const created = await registerOk(project, { userId, mrr: 10 });
    // Fixed on purpose: the clock moves on, so a last_seen_at that went backwards would show.
    await sleep(20);
    const updated = await registerOk(project, { userId, mrr: 25.5 });
    expect(updated.id).toBe(created.id);
    expect(updated.user_id).toBe(userId);
    expect(updated.first_seen_at).toBe(created.first_seen_at);
    expect(Date.parse(updated.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(created.last_seen_at));
    expect(updated.mrr).toBe(25.5);

    const again = await registerOk(project, { userId, mrr: 30 });
    expect(again.id).toBe(created.id);
    expect(again.first_seen_at).toBe(created.first_seen_at);
    expect(Date.parse(again.last_seen_at)).toBeGreaterThanOrEqual(Date.parse(updated.last_seen_at));
    expect(again.mrr).toBe(30);
  });

  it('omitting mrr on an update clears the stored mrr, as the origin did (the Swift SDK clearUserPayment)', async () => {
    const userId = newUserId();
    const created = await registerOk(project, { userId, mrr: 99 });
    const seen = await registerOk(project, { userId });
    expect(seen.id).toBe(created.id);
    expect(seen.mrr).toBeNull();
    expect(seen.first_seen_at).toBe(created.first_seen_at);
    const restored = await registerOk(project, { userId, mrr: 12 });
    expect(restored.mrr).toBe(12);
  });

  it('mrr 0 is accepted (>= 0) and stored as 0, on creation and on update', async () => {
    const fresh = await registerOk(project, { userId: newUserId(), mrr: 0 });
    expect(fresh.mrr).toBe(0);
    const userId = newUserId();
    await registerOk(project, { userId, mrr: 12 });
    const zeroed = await registerOk(project, { userId, mrr: 0 });
    expect(zeroed.mrr).toBe(0);
  });

  it('mrr is a double: fractional values round-trip', async () => {
    const body = await registerOk(project, { userId: newUserId(), mrr: 1234.5678 });
    expect(body.mrr).toBe(1234.5678);
  });

  it('accepts snake_case user_id', async () => {
    const userId = newUserId();
    const created = await registerOk(project, { user_id: userId, mrr: 5 });
    expect(created.user_id).toBe(userId);
    const updated = await registerOk(project, { userId, mrr: 6 });
    expect(updated.id).toBe(created.id);
  });

  it.each([
    [{ userId: 'neg', mrr: -1 }, 'mrr'],
    [{ userId: 'neg', mrr: -0.01 }, 'mrr'],
    [{ userId: 'str', mrr: '10' }, 'mrr'],
    [{ userId: 'str', mrr: 'lots' }, 'mrr'],
    [{ userId: 'bool', mrr: true }, 'mrr'],
    [{ userId: '' }, 'userId'],
    [{ user_id: '' }, 'userId'],
    [{ mrr: 5 }, 'userId'],
    [{ userId: 17 }, 'userId'],
  ])('400 naming the field for %j', async (body, field) => {
    expectError(await register(project, body), 400, field);
  });

  it('a refused update (negative mrr) leaves the stored mrr unchanged', async () => {
    const userId = newUserId();
    const created = await registerOk(project, { userId, mrr: 42 });
    expectError(await register(project, { userId, mrr: -5 }), 400, 'mrr');
    expectError(await register(project, { userId, mrr: 'free' }), 400, 'mrr');
    const seen = await registerOk(project, { userId, mrr: 42 });
    expect(seen).toMatchObject({ id: created.id, mrr: 42, first_seen_at: created.first_seen_at });
  });

  it('400 on a body that is not JSON', async () => {
    const response = await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, rawBody: '{oops' });
    expectError(response, 400);
  });

  it('the same userId in two projects is two distinct users', async () => {
    const other = await createProject(server, { plan: 'pro' });
    const userId = newUserId();
    const here = await registerOk(project, { userId, mrr: 1 });
    const there = await registerOk(other, { userId, mrr: 2 });
    expect(there.id).not.toBe(here.id);
    expect(there.user_id).toBe(userId);
    expect(there.mrr).toBe(2);
    // Updating one leaves the other as it was.
    const hereAgain = await registerOk(project, { userId });
    expect(hereAgain).toMatchObject({ id: here.id, mrr: null });
    const thereAgain = await registerOk(other, { userId, mrr: 2 });
    expect(thereAgain).toMatchObject({ id: there.id, mrr: 2 });
  });

  it('concurrent registrations of one user create one user', async () => {
    const userId = newUserId();
    const responses = await Promise.all(Array.from({ length: 20 }, () => register(project, { userId, mrr: 7 })));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(responses.map((r) => r.body.first_seen_at)).size).toBe(1);
  });

  it('401 without an X-API-Key', async () => {
    const response = await server.request('POST', '/api/v1/users/register', { body: { userId: 'anon' } });
    expectError(response, 401);
  });

  it('401 with an invalid X-API-Key', async () => {
    const response = await server.request('POST', '/api/v1/users/register', {
      apiKey: 'fbk_not_a_real_key',
      body: { userId: 'anon' },
    });
    expectError(response, 401);
  });
});
