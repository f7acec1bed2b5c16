import { beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/*
 * A saved query published as an HTTP endpoint (issue 39, docs/project-sql.md "Endpoints"):
 * publishing, typed parameters and defaults, the three formats, every error, the token's rotation
 * and revocation, CORS by the endpoint's own origins, the cache and its key, isolation between
 * projects, and the per-token rate limit.
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let other: TestProject;

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'pro' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'FOREIGN');
});

const EVENTS_BY_NAME =
  'SELECT event_name, count() AS n FROM events WHERE event_name LIKE {prefix:String} AND length(event_name) >= {min_length:UInt8} GROUP BY event_name ORDER BY event_name LIMIT {limit:UInt16}';

async function savedQuery(s: TestServer, project: TestProject, text: string, name = 'q'): Promise<string> {
  const r = await s.request('POST', `/api/v1/projects/${project.id}/saved-queries`, {
    bearer: project.account.adminToken,
    body: { name, sql: text },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id;
}

async function publish(s: TestServer, project: TestProject, queryId: string, body: Record<string, unknown> = {}) {
  const r = await s.request('POST', `/api/v1/projects/${project.id}/saved-queries/${queryId}/endpoint`, {
    bearer: project.account.adminToken,
    body,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { id: string; url: string; token: string; params: { name: string; type: string; default: string | null }[] };
}

const call = (s: TestServer, id: string, token: string | undefined, search = '', suffix = '', headers: Record<string, string> = {}) =>
  s.request('GET', `/api/v1/q/${id}${suffix}${search ? `?${search}` : ''}`, { ...(token === undefined ? {} : { bearer: token }), headers });

describe('publishing a saved query', () => {
  it('answers id, url, a one-time token and the typed parameters with their defaults', async () => {
    const queryId = await savedQuery(server, own, EVENTS_BY_NAME);
    const endpoint = await publish(server, own, queryId, { defaults: { min_length: 1, limit: 100 }, cache_seconds: 0 });
    expect(endpoint.url).toMatch(new RegExp(`/api/v1/q/${endpoint.id}$`));
    expect(endpoint.token).toMatch(/^fbq_/);
    expect(endpoint.params).toEqual([
      { name: 'prefix', type: 'String', default: null },
      { name: 'min_length', type: 'UInt8', default: '1' },
      { name: 'limit', type: 'UInt16', default: '100' },
    ]);
    const shown = await server.request('GET', `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint`, {
      bearer: own.account.adminToken,
    });
    expect(shown.status).toBe(200);
    expect(shown.body.token).toBeUndefined();
    expect(shown.body.id).toBe(endpoint.id);
  });

  it('refuses a default of an unknown parameter or of the wrong type, naming it; 404 for another project’s query', async () => {
    const queryId = await savedQuery(server, own, EVENTS_BY_NAME);
    const path = `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint`;
    const unknown = await server.request('POST', path, { bearer: own.account.adminToken, body: { defaults: { nope: 1 } } });
    expect([unknown.status, unknown.body.reason]).toEqual([400, 'defaults.nope: the query has no parameter nope']);
    const typed = await server.request('POST', path, { bearer: own.account.adminToken, body: { defaults: { limit: 'many' } } });
    expect(typed.status).toBe(400);
    expect(typed.body.reason).toMatch(/^defaults\.limit: must be an integer/);
    const cache = await server.request('POST', path, { bearer: own.account.adminToken, body: { cacheSeconds: 3601 } });
    expect([cache.status, cache.body.reason]).toEqual([400, 'cacheSeconds: must be an integer from 0 to 3600']);
    const foreign = await server.request('POST', `/api/v1/projects/${other.id}/saved-queries/${queryId}/endpoint`, {
      bearer: other.account.adminToken,
      body: {},
    });
    expect(foreign.status).toBe(404);
  });
});

describe('calling an endpoint', () => {
  let endpoint: Awaited<ReturnType<typeof publish>>;
  beforeAll(async () => {
    endpoint = await publish(server, own, await savedQuery(server, own, EVENTS_BY_NAME), { defaults: { min_length: 1, limit: 100 } });
  });

  it('answers JSON with data, meta, rows and statistics: only the project’s rows, within its window', async () => {
    const r = await call(server, endpoint.id, endpoint.token, 'prefix=%25');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.meta).toEqual([
      { name: 'event_name', type: 'LowCardinality(String)' },
      { name: 'n', type: 'UInt64' },
    ]);
    // The seed's old row (100 days ago) is outside the Pro window; FOREIGN rows are another project's.
    expect(r.body.data).toEqual([
      { event_name: 'feedback_list', n: '1' },
      { event_name: 'own_custom', n: '1' },
      { event_name: 'submit_feedback', n: '1' },
    ]);
    expect(r.body.rows).toBe(3);
    expect(r.body.statistics).toEqual({ elapsed: expect.any(Number), cached: false });
    expect(JSON.stringify(r.body)).not.toContain('FOREIGN');
  });

  it('takes parameters over defaults; .csv and .ndjson give those formats', async () => {
    const limited = await call(server, endpoint.id, endpoint.token, 'prefix=%25&limit=1');
    expect(limited.body.data).toEqual([{ event_name: 'feedback_list', n: '1' }]);
    const csv = await call(server, endpoint.id, endpoint.token, 'prefix=s%25', '.csv');
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.body).toBe('event_name,n\r\nsubmit_feedback,1\r\n');
    const ndjson = await call(server, endpoint.id, endpoint.token, 'prefix=%25&limit=2', '.ndjson');
    expect(ndjson.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(ndjson.body).toBe('{"event_name":"feedback_list","n":"1"}\n{"event_name":"own_custom","n":"1"}\n');
  });

  it('a missing, mistyped, doubled or unknown parameter is a 400 that names it', async () => {
    const cases: [string, RegExp][] = [
      ['', /^prefix: is required \(String\)$/],
      ['prefix=a&limit=-1', /^limit: must be an integer from 0 to 65535 \(UInt16\)$/],
      ['prefix=a&limit=x', /^limit: must be an integer/],
      ['prefix=a&prefix=b', /^prefix: given more than once$/],
      ['prefix=a&colour=red', /^colour: the query has no parameter colour$/],
    ];
    for (const [search, reason] of cases) {
      const r = await call(server, endpoint.id, endpoint.token, search);
      expect(r.status, search).toBe(400);
      expect(r.body.reason, search).toMatch(reason);
    }
  });

  it('401 without or with a bad token; 404 for an unknown or malformed endpoint', async () => {
    expect((await call(server, endpoint.id, undefined, 'prefix=a')).status).toBe(401);
    expect((await call(server, endpoint.id, 'fbq_wrong', 'prefix=a')).status).toBe(401);
    expect((await call(server, '00000000-0000-4000-8000-000000000000', endpoint.token, 'prefix=a')).status).toBe(404);
    expect((await call(server, 'not-an-id', endpoint.token)).status).toBe(404);
    // Another endpoint's token opens nothing here.
    const another = await publish(server, own, await savedQuery(server, own, 'SELECT 1 AS one'));
    expect((await call(server, endpoint.id, another.token, 'prefix=a')).status).toBe(401);
    expect((await call(server, another.id, another.token)).body.data).toEqual([{ one: 1 }]);
  });

  it('lists its calls, newest first, without parameter values', async () => {
    const queryPath = `/api/v1/projects/${own.id}/saved-queries`;
    await eventually('the calls are recorded', 10_000, async () => {
      const calls = await server.request('GET', `${queryPath}/${await endpointQueryId(endpoint.id)}/endpoint/calls`, {
        bearer: own.account.adminToken,
      });
      return calls.status === 200 && calls.body.length >= 8;
    });
    const calls = await server.request('GET', `${queryPath}/${await endpointQueryId(endpoint.id)}/endpoint/calls`, {
      bearer: own.account.adminToken,
    });
    expect(Object.keys(calls.body[0]).sort()).toEqual(['cached', 'called_at', 'duration_ms', 'format', 'rows', 'status']);
    expect(calls.body[0].status).toBe(401); // the last call, with another endpoint's token
    expect(calls.body.map((c: { status: number }) => c.status)).toContain(400);
    expect(calls.body.map((c: { format: string }) => c.format)).toContain('csv');
  });
});

async function endpointQueryId(endpointId: string): Promise<string> {
  const [row] = await server.sql<{ saved_query_id: string }[]>`select saved_query_id from saved_query_endpoints where id = ${endpointId}`;
  return row?.saved_query_id ?? '';
}

describe('rotating and unpublishing', () => {
  it('a rotated token replaces the old one; an unpublished endpoint answers 404', async () => {
    const queryId = await savedQuery(server, own, 'SELECT 2 AS two');
    const endpoint = await publish(server, own, queryId);
    expect((await call(server, endpoint.id, endpoint.token)).status).toBe(200);
    const rotated = await server.request('POST', `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint/token`, {
      bearer: own.account.adminToken,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).not.toBe(endpoint.token);
    expect(rotated.body.id).toBe(endpoint.id);
    expect((await call(server, endpoint.id, endpoint.token)).status).toBe(401);
    expect((await call(server, endpoint.id, rotated.body.token)).status).toBe(200);
    const removed = await server.request('DELETE', `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint`, {
      bearer: own.account.adminToken,
    });
    expect(removed.body).toEqual({ id: endpoint.id, deleted: true });
    expect((await call(server, endpoint.id, rotated.body.token)).status).toBe(404);
    const again = await server.request('DELETE', `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint`, {
      bearer: own.account.adminToken,
    });
    expect(again.status).toBe(404);
  });
});

describe('CORS, opt-in per endpoint', () => {
  it('answers a listed origin, refuses another; the preflight allows only the listed one', async () => {
    const queryId = await savedQuery(server, own, 'SELECT 3 AS three');
    const endpoint = await publish(server, own, queryId, { corsOrigins: ['https://app.example.com'] });
    const listed = await call(server, endpoint.id, endpoint.token, '', '', { origin: 'https://app.example.com' });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const other = await call(server, endpoint.id, endpoint.token, '', '', { origin: 'https://evil.example.com' });
    expect(other.status).toBe(403);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = async (origin: string) =>
      fetch(`${server.url}/api/v1/q/${endpoint.id}`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
    const ok = await preflight('https://app.example.com');
    expect([ok.status, ok.headers.get('access-control-allow-origin'), ok.headers.get('access-control-allow-headers')]).toEqual([
      204,
      'https://app.example.com',
      'Authorization',
    ]);
    const refused = await preflight('https://evil.example.com');
    expect([refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([204, null]);
    const bad = await server.request('POST', `/api/v1/projects/${own.id}/saved-queries/${queryId}/endpoint`, {
      bearer: own.account.adminToken,
      body: { corsOrigins: ['https://*.example.com'] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toMatch(/^corsOrigins\.0: .*is not an exact origin/);
  });
});

describe('the cache', () => {
  it('serves the same parameters again without the engine, keys on every parameter, and is dropped by republishing', async () => {
    const queryId = await savedQuery(server, own, 'SELECT count() AS n, {tag:String} AS tag FROM events');
    const endpoint = await publish(server, own, queryId, { cacheSeconds: 60 });
    const first = await call(server, endpoint.id, endpoint.token, 'tag=a');
    expect(first.body).toMatchObject({ data: [{ n: '3', tag: 'a' }], statistics: { cached: false } });
    // New rows: an uncached answer would count them.
    await seedAnalytics(server, own.id, 'own');
    const hit = await call(server, endpoint.id, endpoint.token, 'tag=a');
    expect(hit.body).toMatchObject({ data: [{ n: '3', tag: 'a' }], statistics: { cached: true } });
    const otherValue = await call(server, endpoint.id, endpoint.token, 'tag=b');
    expect(otherValue.body).toMatchObject({ data: [{ n: '6', tag: 'b' }], statistics: { cached: false } });
    const republished = await publish(server, own, queryId, { cacheSeconds: 60 });
    const after = await call(server, endpoint.id, republished.token, 'tag=a');
    expect(after.body).toMatchObject({ data: [{ n: '6', tag: 'a' }], statistics: { cached: false } });
    // Without a cache time nothing is kept.
    const uncachedId = await savedQuery(server, own, 'SELECT count() AS n FROM events');
    const uncached = await publish(server, own, uncachedId);
    await call(server, uncached.id, uncached.token);
    expect((await call(server, uncached.id, uncached.token)).body.statistics.cached).toBe(false);
  });

  it('never serves one project’s cached answer to another’s endpoint of the same text', async () => {
    const text = 'SELECT count() AS n, any(user_id) AS someone FROM events';
    const mine = await publish(server, own, await savedQuery(server, own, text), { cacheSeconds: 60 });
    const theirs = await publish(server, other, await savedQuery(server, other, text), { cacheSeconds: 60 });
    const a = await call(server, mine.id, mine.token);
    const b = await call(server, theirs.id, theirs.token);
    expect(JSON.stringify(a.body.data)).not.toContain('FOREIGN');
    expect(JSON.stringify(b.body.data)).toContain('FOREIGN');
    expect((await call(server, theirs.id, mine.token)).status).toBe(401);
  });
});
