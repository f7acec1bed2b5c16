import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

const PAGE = 'https://app.example.com';
const OTHER_PAGE = 'https://evil.example.net';
const SERVICE_PUBLIC_URL = 'https://feedback.example.org';

/** Issue 22: web pages call the client routes with the API key; owner and operator routes stay closed. */
describe('CORS for browser clients', () => {
  const server = useTestServer({ env: { RATE_LIMIT_INGEST: '3/min', PUBLIC_URL: SERVICE_PUBLIC_URL } });
  let project: TestProject;
  let feedbackId: string;

  beforeAll(async () => {
    // PUBLIC_URL: the service's address behind a proxy that ends TLS (its own pages' origin).
    project = await createProject(server, { plan: 'pro' });
    feedbackId = (await createFeedback(server, project)).id;
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

  it('refuses wildcards, user info, paths and trailing dots in allowed_origins with a 400 naming the value (issue 33)', async () => {
    const port = new URL(server.url).port;
    const refused: [string, string][] = [
      ['http://*', 'a wildcard is not allowed'],
      ['https://*.example.com', 'a wildcard is not allowed'],
      ['http://127.0.0.*', 'a wildcard is not allowed'],
      [`http://*:${port}`, 'a wildcard is not allowed'],
      ['https://user:pw@app.example.com', 'user info is not allowed'],
      ['https://app.example.com.', 'a trailing dot is not allowed'],
      ['https://app.example.com/board', 'a path, query or fragment is not allowed'],
      ['https://app.example.com:443', 'a browser sends it as https://app.example.com'],
      ['ftp://app.example.com', 'the scheme must be http or https'],
    ];
    for (const [bad, why] of refused) {
      const response = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
        bearer: project.account.adminToken,
        body: { allowedOrigins: [PAGE, bad] },
      });
      expect(response.status, bad).toBe(400);
      expect(response.body.reason).toBe(
        `allowedOrigins.1: ${JSON.stringify(bad)} is not an exact origin (${why}); give scheme, host and an optional port, such as https://app.example.com`,
      );
    }
    const shown = await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken });
    expect(shown.body.allowed_origins).toEqual([]);
    // Exact origins still pass: an IP with a port, IPv6, punycode.
    const exact = ['http://127.0.0.1:5173', 'http://[::1]:8080', 'https://xn--bcher-kva.example'];
    const ok = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { allowedOrigins: exact },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.allowed_origins).toEqual(exact);
    await server.request('PATCH', `/api/v1/projects/${project.id}`, { bearer: project.account.adminToken, body: { allowedOrigins: [] } });
  });

  it('frame-ancestors of the widget and the board lists exact origins only: a wildcard stored before issue 33 is left out', async () => {
    const framed = await createProject(server, { plan: 'pro' });
    const settings = await server.request('PATCH', `/api/v1/projects/${framed.id}`, {
      bearer: framed.account.adminToken,
      body: { boardPublic: true },
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const { publishable_key: key, slug } = settings.body;
    const frameAncestors = async (path: string) => {
      const csp = (await fetch(`${server.url}${path}`)).headers.get('content-security-policy') ?? '';
      return /frame-ancestors ([^;]*)/.exec(csp)?.[1];
    };
    const store = (origins: string[]) => server.sql`update projects set allowed_origins = ${origins} where id = ${framed.id}`;
    await store(['http://*']);
    expect(await frameAncestors(`/widget?key=${key}`)).toBe("'none'");
    expect(await frameAncestors(`/board/${slug}`)).toBe("'none'");
    await store(['https://*.example.com', PAGE]);
    expect(await frameAncestors(`/widget?key=${key}`)).toBe(PAGE);
    expect(await frameAncestors(`/board/${slug}`)).toBe(PAGE);
    await store([]);
    expect(await frameAncestors(`/board/${slug}`)).toBe('*');
  });

  it('the service’s own origin is scheme, host and port: the other scheme or port is another site (issue 33)', async () => {
    const restricted = await createProject(server, { plan: 'pro' });
    await server.request('PATCH', `/api/v1/projects/${restricted.id}`, {
      bearer: restricted.account.adminToken,
      body: { allowedOrigins: [PAGE] },
    });
    const own = new URL(server.url);
    const read = (origin: string) => server.request('GET', '/api/v1/feedbacks', { apiKey: restricted.apiKey, headers: { origin } });
    expect((await read(own.origin)).status).toBe(200);
    expect((await read(PAGE)).status).toBe(200);
    const otherScheme = await read(`https://${own.host}`);
    expect(otherScheme.status).toBe(403);
    expect(otherScheme.body.reason).toContain(`https://${own.host}`);
    expect((await read(`http://${own.hostname}:${Number(own.port) + 1}`)).status).toBe(403);
    // Behind a proxy that ends TLS the pages are PUBLIC_URL's: that origin, exactly, is the service's too.
    expect((await read(SERVICE_PUBLIC_URL)).status).toBe(200);
    expect((await read(`http://${new URL(SERVICE_PUBLIC_URL).host}`)).status).toBe(403);
  });
});
