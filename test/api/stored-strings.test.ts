import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { createAccount, createFeedback, createProject, type TestAccount, type TestProject } from '../helpers/factories.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/*
 * Issue 13, item 5 (strings) and item 2 (validation): a string a store cannot hold -- a lone
 * UTF-16 surrogate (no UTF-8 form: ClickHouse refuses the whole insert) or NUL (PostgreSQL text
 * refuses it, error 22021) -- is a 400 naming the field, on every route, in bodies (keys too) and
 * query parameters, and nothing is stored. JSON.stringify sends a lone surrogate as the escape
 * `\ud800`, which the server's JSON parser turns back into the lone surrogate.
 */

const BAD = [
  { name: 'a lone surrogate', value: 'x\ud800y', reason: /must not contain a lone UTF-16 surrogate/ },
  { name: 'NUL', value: 'x\u0000y', reason: /must not contain the NUL character/ },
];

describe('strings no store can hold are refused with 400 naming the field', () => {
  const server = useTestServer();
  let account: TestAccount;
  let project: TestProject;
  let feedbackId: string;

  beforeAll(async () => {
    account = await createAccount(server, 'pro');
    project = await createProject(server, { account });
    feedbackId = (await createFeedback(server, project)).id;
  });

  async function expect400(method: string, path: string, options: Parameters<TestServer['request']>[2], field: string, reason: RegExp) {
    const response = await server.request(method, path, options);
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.error).toBe(true);
    expect(response.body.reason.startsWith(`${field}: `), response.body.reason).toBe(true);
    expect(response.body.reason).toMatch(reason);
  }

  describe.each(BAD)('$name', ({ value, reason }) => {
    it('POST /events/track: eventName, userId, a property value and a property key', async () => {
      const key = { apiKey: project.apiKey };
      await expect400('POST', '/api/v1/events/track', { ...key, body: { eventName: value, userId: 'u' } }, 'eventName', reason);
      await expect400('POST', '/api/v1/events/track', { ...key, body: { eventName: 'e', user_id: value } }, 'user_id', reason);
      await expect400(
        'POST',
        '/api/v1/events/track',
        { ...key, body: { eventName: 'e', userId: 'u', properties: { a: { b: [1, value] } } } },
        'properties.a.b.1',
        reason,
      );
      await expect400(
        'POST',
        '/api/v1/events/track',
        { ...key, body: { eventName: 'e', userId: 'u', properties: { [value]: 1 } } },
        'properties',
        /a key must not/,
      );
    });

    it('POST /events/batch rejects that event alone, naming the field', async () => {
      const response = await server.request('POST', '/api/v1/events/batch', {
        apiKey: project.apiKey,
        body: {
          events: [
            { eventName: 'e', userId: 'u', timestamp: 'not a time' },
            { eventName: 'e', userId: value },
            { eventName: 'e', userId: 'u', properties: { [value]: 1 } },
          ],
        },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ accepted: 0, rejected: 3 });
      expect(response.body.results[1].reason).toMatch(/^userId: /);
      expect(response.body.results[1].reason).toMatch(reason);
      expect(response.body.results[2].reason).toMatch(/^properties: a key /);
    });

    it('POST /feedbacks: title, description and userId', async () => {
      const body = { title: 't', description: 'd', category: 'bug_report', userId: 'u' };
      for (const field of ['title', 'description', 'userId'] as const) {
        await expect400('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, body: { ...body, [field]: value } }, field, reason);
      }
    });

    it('votes (add and remove) and comments', async () => {
      const path = `/api/v1/feedbacks/${feedbackId}`;
      await expect400('POST', `${path}/votes`, { apiKey: project.apiKey, body: { userId: value } }, 'userId', reason);
      await expect400('DELETE', `${path}/votes`, { apiKey: project.apiKey, body: { userId: value } }, 'userId', reason);
      await expect400('POST', `${path}/comments`, { apiKey: project.apiKey, body: { content: value, userId: 'u' } }, 'content', reason);
      await expect400('POST', `${path}/comments`, { apiKey: project.apiKey, body: { content: 'c', userId: value } }, 'userId', reason);
    });

    it('POST /users/register and POST /projects', async () => {
      await expect400('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: value, mrr: 1 } }, 'userId', reason);
      await expect400('POST', '/api/v1/projects', { bearer: account.adminToken, body: { name: value } }, 'name', reason);
    });

    it('a top-level key of a body', async () => {
      await expect400(
        'POST',
        '/api/v1/users/register',
        { apiKey: project.apiKey, body: { userId: 'u', [value]: 1 } },
        'body',
        /a key must not/,
      );
    });
  });

  // A URL carries bytes: a percent-encoded lone surrogate is invalid UTF-8 and decodes to U+FFFD,
  // so only NUL (%00) reaches a query parameter.
  it('a query parameter (%00), in the server-wide body and in the METRICS body on metrics routes', async () => {
    await expect400('GET', '/api/v1/feedbacks?sort=votes%00', { apiKey: project.apiKey }, 'sort', /NUL/);
    await expect400('GET', '/api/v1/feedbacks?x%00=1', { apiKey: project.apiKey }, 'query', /a key must not contain the NUL/);
    for (const path of [
      '/api/v1/metrics/summary?event=feedback%00list',
      `/api/v1/projects/${project.id}/metrics/summary?event=feedback%00list`,
    ]) {
      const response = await server.request(
        'GET',
        path,
        path.includes('/projects/') ? { bearer: account.adminToken } : { apiKey: project.apiKey },
      );
      expect(response.status, JSON.stringify(response.body)).toBe(400);
      expect(response.body.error.code).toBe('METRICS_INVALID_PARAMETER');
      expect(response.body.error.message).toMatch(/^event: must not contain the NUL character/);
    }
  });

  it('a path parameter with NUL (%00, a%00b) on every route of the document: 400, never a 500 from PostgreSQL (22021)', async () => {
    const document = buildOpenApiDocument() as unknown as { paths: Record<string, Record<string, { servers?: { url: string }[] }>> };
    let checked = 0;
    for (const [template, operations] of Object.entries(document.paths)) {
      if (!template.includes('{')) continue;
      for (const [method, operation] of Object.entries(operations)) {
        const prefix = operation.servers?.[0]?.url === '/' ? '' : '/api/v1';
        const credentials = template.startsWith('/admin/')
          ? { bearer: server.operatorToken }
          : template.startsWith('/projects')
            ? { bearer: account.adminToken }
            : { apiKey: project.apiKey };
        // Each parameter in turn holds the NUL; the others are real, so the route would otherwise find them.
        for (const param of template.match(/\{\w+\}/g) ?? []) {
          for (const bad of ['%00', 'a%00b']) {
            const path =
              prefix +
              template.replace(/\{(\w+)\}/g, (whole, name) =>
                whole === param ? bad : name === 'id' && template.startsWith('/projects') ? project.id : feedbackId,
              );
            const upper = method.toUpperCase();
            const response = await server.request(upper, path, {
              ...credentials,
              ...(upper === 'GET' || upper === 'DELETE' ? {} : { body: {} }),
            });
            expect(response.status, `${upper} ${path}: ${JSON.stringify(response.body)}`).toBe(400);
            const reason = response.body.error === true ? response.body.reason : response.body.error.message;
            expect(reason, `${upper} ${path}`).toMatch(/^path: a segment must not contain the NUL character/);
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(60);
    // The probe's own request, on the route that answered 500.
    const probe = await server.request('DELETE', `/api/v1/projects/${project.id}/users/%00`, { bearer: account.adminToken });
    expect(probe.status).toBe(400);
  });

  it('stores nothing for a refused request', async () => {
    const [feedbacks] = await server.sql<{ n: number }[]>`select count(*)::int as n from feedbacks where project_id = ${project.id}`;
    expect(feedbacks?.n).toBe(1);
    const [others] = await server.sql<{ votes: number; comments: number; users: number; projects: number; dead_letters: number }[]>`
      select (select count(*)::int from votes where feedback_id = ${feedbackId}) as votes,
             (select count(*)::int from comments where feedback_id = ${feedbackId}) as comments,
             (select count(*)::int from sdk_users where project_id = ${project.id}) as users,
             (select count(*)::int from projects where account_id = ${account.id}) as projects,
             (select count(*)::int from dead_letters) as dead_letters`;
    expect(others).toEqual({ votes: 1, comments: 0, users: 0, projects: 1, dead_letters: 0 });
    // Embedded ingestion answers after the insert: a stored event would be visible now.
    const events = await server.clickhouseRows('SELECT 1 FROM events WHERE project_id = {p:UUID}', { p: project.id });
    expect(events).toEqual([]);
  });

  it('still accepts well-formed text: paired surrogates (emoji) and other control characters', async () => {
    const response = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'party 🎉', userId: 'u\t1', properties: { '🎉': 'tab\there' } },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    await server.eventsVisible();
    const rows = await server.clickhouseRows<{ event_name: string }>('SELECT event_name FROM events WHERE project_id = {p:UUID}', {
      p: project.id,
    });
    expect(rows).toEqual([{ event_name: 'party 🎉' }]);
  });
});

describe('the string check on a deeply nested body', () => {
  const server = useTestServer();
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server);
  });

  it('finds NUL 100,000 levels deep in linear time, naming its place', async () => {
    const depth = 100_000;
    const rawBody = `{"eventName":"e","userId":"u","properties":${'{"a":'.repeat(depth)}"\\u0000"${'}'.repeat(depth)}}`;
    const started = Date.now();
    const response = await server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, rawBody });
    expect(response.status).toBe(400);
    expect(response.body.reason).toBe('properties.a.a.a.a.a.a.a.….a.a.a: must not contain the NUL character (\\u0000)');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('deeply nested event properties', () => {
  const server = useTestServer();
  let project: TestProject;

  beforeAll(async () => {
    project = await createProject(server);
  });

  /** Properties of `depth` nested objects. */
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

  it('are refused past 64 levels with 400 (was a 500: serializing them overflowed the stack)', async () => {
    for (const depth of [65, 5_000, 100_000]) {
      const rawBody = `{"eventName":"e","userId":"u","properties":${nested(depth)}}`;
      const response = await server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, rawBody });
      expect(response.status, `depth ${depth}: ${JSON.stringify(response.body)}`).toBe(400);
      expect(response.body.reason).toBe('properties: must nest at most 64 levels');
    }
  });

  it('are accepted up to 64 levels', async () => {
    const rawBody = `{"eventName":"e","userId":"u","properties":${nested(64)}}`;
    const response = await server.request('POST', '/api/v1/events/track', { apiKey: project.apiKey, rawBody });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  });
});
