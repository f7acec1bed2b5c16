import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PAGE = 'https://app.example.com';
const OTHER_PAGE = 'https://evil.example.net';

/** Issue 22: web pages call the client routes with the API key; owner and operator routes stay closed. */
describe('CORS for browser clients', () => {
  let server: TestServer;
  let project: TestProject;
  let feedbackId: string;

  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_INGEST: '3/min' } });
    project = await createProject(server, { plan: 'pro' });
    feedbackId = (await createFeedback(server, project)).id;
  });
  afterAll(async () => {
    await server?.close();
  });

  const preflight = (path: string, origin = PAGE) =>
    server.request('OPTIONS', path, {
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' },
    });

  it('answers the preflight of every client route with 204 for any origin, without credentials', async () => {
    const paths = [
      '/api/v1/feedbacks',
      `/api/v1/feedbacks/${feedbackId}`,
      `/api/v1/feedbacks/${feedbackId}/votes`,
      `/api/v1/feedbacks/${feedbackId}/comments`,
      '/api/v1/users/register',
      '/api/v1/events/track',
      '/api/v1/events/batch',
    ];
    for (const path of paths) {
      const response = await preflight(path, OTHER_PAGE);
      expect(response.status, path).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), path).toBe(OTHER_PAGE);
      expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
      expect(response.headers.get('access-control-allow-headers')).toBe(
        'X-API-Key, X-User-Id, X-User-Token, Content-Type, Content-Encoding',
      );
      expect(response.headers.get('access-control-max-age')).toBe('86400');
      expect(response.headers.get('vary')).toMatch(/\bOrigin\b/);
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('gives owner and operator routes no CORS headers', async () => {
    for (const path of [`/api/v1/projects/${project.id}`, '/api/v1/projects', '/api/v1/account', '/api/v1/admin/accounts']) {
      const response = await server.request('OPTIONS', path, {
        headers: { origin: PAGE, 'access-control-request-method': 'GET' },
        skipOpenApiCheck: 'the router’s own OPTIONS answer of an owner route (no preflight there)',
      });
      expect(response.headers.get('access-control-allow-origin'), path).toBeNull();
    }
    const owner = await server.request('GET', '/api/v1/projects', { bearer: project.account.adminToken, headers: { origin: PAGE } });
    expect(owner.status).toBe(200);
    expect(owner.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('lets the page read the answers of client routes, refusals included, and the back-off headers', async () => {
    const track = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      headers: { origin: PAGE },
      body: { eventName: 'feedback_list', userId: 'u1' },
    });
    expect(track.status).toBe(200);
    expect(track.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(track.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(track.headers.get('vary')).toMatch(/\bOrigin\b/);

    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: 'fbk_wrong', headers: { origin: PAGE } });
    expect(list.status).toBe(401);
    expect(list.headers.get('access-control-allow-origin')).toBe(PAGE);

    // Without an Origin (a server or a mobile app) no CORS header is sent; a GET still varies by it.
    const plain = await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    expect(plain.headers.get('vary')).toMatch(/\bOrigin\b/);
  });

  it('a 429 carries Retry-After, readable by the page', async () => {
    const limited = await createProject(server, { plan: 'free' });
    let last: Awaited<ReturnType<TestServer['request']>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await server.request('POST', '/api/v1/events/track', {
        apiKey: limited.apiKey,
        headers: { origin: PAGE },
        body: { eventName: 'feedback_list', userId: 'u1' },
      });
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last?.headers.get('access-control-allow-origin')).toBe(PAGE);
    expect(last?.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('allowed_origins restricts a key to listed origins: others get 403, requests without Origin still pass', async () => {
    const restricted = await createProject(server, { plan: 'pro' });
    const patch = await server.request('PATCH', `/api/v1/projects/${restricted.id}`, {
      bearer: restricted.account.adminToken,
      body: { allowed_origins: [PAGE, 'http://localhost:5173'] },
    });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    expect(patch.body.allowed_origins).toEqual([PAGE, 'http://localhost:5173']);
    const shown = await server.request('GET', `/api/v1/projects/${restricted.id}`, { bearer: restricted.account.adminToken });
    expect(shown.body.allowed_origins).toEqual([PAGE, 'http://localhost:5173']);

    const register = (origin?: string) =>
      server.request('POST', '/api/v1/users/register', {
        apiKey: restricted.apiKey,
        ...(origin ? { headers: { origin } } : {}),
        body: { userId: 'u1' },
      });
    expect((await register(PAGE)).status).toBe(200);
    expect((await register()).status).toBe(200);
    const refused = await register(OTHER_PAGE);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({
      error: true,
      reason: expect.stringContaining(OTHER_PAGE),
      message: expect.stringContaining(OTHER_PAGE),
    });
    // The preflight cannot know the key's project: it is answered for any origin.
    expect((await preflight('/api/v1/users/register', OTHER_PAGE)).status).toBe(204);
    const list = await server.request('GET', '/api/v1/feedbacks', { apiKey: restricted.apiKey, headers: { origin: OTHER_PAGE } });
    expect(list.status).toBe(403);

    // camelCase too, and [] allows any origin again.
    const reset = await server.request('PATCH', `/api/v1/projects/${restricted.id}`, {
      bearer: restricted.account.adminToken,
      body: { allowedOrigins: [] },
    });
    expect(reset.body.allowed_origins).toEqual([]);
    expect((await register(OTHER_PAGE)).status).toBe(200);
  });

  it('refuses an allowed_origins entry a browser could never send, naming the field', async () => {
    for (const bad of ['https://app.example.com/', 'https://App.example.com', '*', 'app.example.com', 'https://a.com/path', 42]) {
      const response = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
        bearer: project.account.adminToken,
        body: { allowedOrigins: [bad] },
      });
      expect(response.status, String(bad)).toBe(400);
      expect(response.body.reason).toMatch(/^allowedOrigins\.0: /);
    }
    const notArray = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { allowedOrigins: PAGE },
    });
    expect(notArray.status).toBe(400);
  });
});
