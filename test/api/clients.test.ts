import { request as httpRequest } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { createFeedback, createProject, setSuspended, type TestProject } from '../helpers/factories.js';
import { assertDocumented } from '../helpers/openapi-validator.js';
import { rawRequest } from '../helpers/raw-http.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const DAY = 24 * 3600 * 1000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

describe('query parameters in either casing (SDKs that rename them)', () => {
  let project: TestProject;
  let kept: { id: string };
  let merged: { id: string };
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    kept = await createFeedback(server, project, { title: 'Kept' });
    merged = await createFeedback(server, project, { title: 'Merged' });
    const response = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${merged.id}/merge`, {
      bearer: project.account.adminToken,
      body: { intoId: kept.id },
    });
    expect(response.status).toBe(200);
  });

  const listIds = async (query: string) => {
    const response = await server.request('GET', `/api/v1/feedbacks${query}`, { apiKey: project.apiKey });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return (response.body as { id: string }[]).map((item) => item.id).sort();
  };

  it('GET /feedbacks?include_merged=true lists merged items, like the documented includeMerged=true', async () => {
    const all = [kept.id, merged.id].sort();
    expect(await listIds('?includeMerged=true')).toEqual(all);
    expect(await listIds('?include_merged=true')).toEqual(all);
    expect(await listIds('?include_merged=1')).toEqual(all);
    expect(await listIds('?include_merged=false')).toEqual([kept.id]);
    expect(await listIds('')).toEqual([kept.id]);
    // Both spellings agreeing are one parameter.
    expect(await listIds('?includeMerged=true&include_merged=true')).toEqual(all);
  });

  it('both spellings disagreeing: 400 naming the parameter', async () => {
    const response = await server.request('GET', '/api/v1/feedbacks?includeMerged=true&include_merged=false', { apiKey: project.apiKey });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: true,
      reason: 'includeMerged: must be given once: includeMerged and include_merged disagree',
      message: 'includeMerged: must be given once: includeMerged and include_merged disagree',
    });
    // A parameter repeated in one spelling stays a 400, as before.
    const repeated = await server.request('GET', '/api/v1/feedbacks?include_merged=true&include_merged=true', { apiKey: project.apiKey });
    expect(repeated.status).toBe(400);
    expect(repeated.body.reason).toMatch(/^includeMerged: must be given at most once/);
    // The value is still validated under the alias.
    const invalid = await server.request('GET', '/api/v1/feedbacks?include_merged=yes', { apiKey: project.apiKey });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      error: true,
      reason: 'includeMerged: must be true or false',
      message: 'includeMerged: must be true or false',
    });
  });

  it('the owners’ list takes include_merged too', async () => {
    const response = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks?include_merged=true`, {
      bearer: project.account.adminToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.map((item: { id: string }) => item.id).sort()).toEqual([kept.id, merged.id].sort());
  });

  it('metrics read dateFrom, dateTo and userId as date_from, date_to and user_id', async () => {
    const query = `dateFrom=${daysAgo(5)}&dateTo=${daysAgo(1)}`;
    for (const [path, auth] of [
      ['/api/v1/metrics/summary', { apiKey: project.apiKey }],
      [`/api/v1/projects/${project.id}/metrics/summary`, { bearer: project.account.adminToken }],
    ] as const) {
      const response = await server.request('GET', `${path}?${query}`, auth);
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body).toMatchObject({ date_from: daysAgo(5), date_to: daysAgo(1) });
    }
    const feed = await server.request('GET', '/api/v1/metrics/events?userId=nobody&user_id=nobody', { apiKey: project.apiKey });
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    expect(feed.body.events).toEqual([]);
  });

  it('metrics: both spellings disagreeing is a 400 METRICS_INVALID_PARAMETER naming the parameter', async () => {
    const response = await server.request('GET', `/api/v1/metrics/summary?date_from=${daysAgo(5)}&dateFrom=${daysAgo(4)}`, {
      apiKey: project.apiKey,
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: { code: 'METRICS_INVALID_PARAMETER', message: 'date_from must be given once: date_from and dateFrom disagree' },
    });
  });
});

describe('measures as generated OpenAPI clients send arrays', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'team' });
  });

  /** The query string of openapi-fetch's default serializer: an array is the parameter repeated. */
  const exploded = (params: Record<string, string | string[]>) => {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) for (const item of [value].flat()) search.append(name, item);
    return search.toString();
  };

  it('measures=a&measures=b is the same as measures=a,b, on every operation that takes measures', async () => {
    for (const [operation, extra] of [
      ['summary', {}],
      ['timeseries', { interval: 'week' }],
      ['breakdown', { dimension: 'category' }],
    ] as const) {
      const asList = await server.request(
        'GET',
        `/api/v1/metrics/${operation}?${exploded({ ...extra, measures: 'feedback_count,vote_count' })}`,
        {
          apiKey: project.apiKey,
        },
      );
      const repeated = await server.request(
        'GET',
        `/api/v1/metrics/${operation}?${exploded({ ...extra, measures: ['feedback_count', 'vote_count'] })}`,
        {
          apiKey: project.apiKey,
        },
      );
      expect(repeated.status, JSON.stringify(repeated.body)).toBe(200);
      expect(repeated.body).toEqual(asList.body);
    }
    const summary = await server.request(
      'GET',
      `/api/v1/projects/${project.id}/metrics/summary?measures=sdk_users&measures=event_count,total_mrr`,
      {
        bearer: project.account.adminToken,
      },
    );
    expect(summary.status).toBe(200);
    expect(Object.keys(summary.body.measures).sort()).toEqual(['event_count', 'sdk_users', 'total_mrr']);
  });

  it('a repeated measure list is still checked, and other parameters may still be given once', async () => {
    const unknown = await server.request('GET', '/api/v1/metrics/summary?measures=event_count&measures=nope', { apiKey: project.apiKey });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('METRICS_UNKNOWN_MEASURE');
    const adminOnly = await server.request('GET', '/api/v1/metrics/summary?measures=event_count&measures=total_mrr', {
      apiKey: project.apiKey,
    });
    expect(adminOnly.status).toBe(403);
    const twice = await server.request('GET', `/api/v1/metrics/summary?date_to=${daysAgo(1)}&date_to=${daysAgo(2)}`, {
      apiKey: project.apiKey,
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({
      code: 'METRICS_INVALID_PARAMETER',
      message: expect.stringMatching(/^date_to must be given at most once/),
    });
  });

  it('the OpenAPI document describes measures as form style, exploded, and the comma list too', () => {
    const document = buildOpenApiDocument() as unknown as {
      paths: Record<string, Record<string, { parameters?: Record<string, unknown>[] }>>;
    };
    for (const path of ['/metrics/summary', '/metrics/timeseries', '/metrics/breakdown', '/projects/{id}/metrics/summary']) {
      const measures = document.paths[path]?.get?.parameters?.find((p) => p.name === 'measures');
      expect(measures, path).toMatchObject({ in: 'query', style: 'form', explode: true, schema: { type: 'array' } });
      expect(measures?.description).toMatch(/measures=a&measures=b.*measures=a,b/);
    }
  });
});

type RawResponse = { status: number; text: string; headers: Headers };

/**
 * POSTs `declaredBytes` of JSON body (Content-Length) but sends only the first 64 KiB, then waits
 * for an answer: a server that reads the body before checking the credential never answers.
 */
function postWithUnfinishedBody(path: string, headers: Record<string, string>, declaredBytes = 5 * 1024 * 1024 - 1): Promise<RawResponse> {
  const url = new URL(server.url + path);
  const started = Buffer.from(`{"events":[${'{"eventName":"feedback_list","userId":"u"},'.repeat(1500)}`);
  return new Promise((resolve, reject) => {
    const request = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(declaredBytes), ...headers },
    });
    const deadline = setTimeout(() => {
      request.destroy();
      reject(new Error('no answer before the body was complete: the body is read before the credential is checked'));
    }, 5_000);
    request.on('error', (error) => {
      clearTimeout(deadline);
      reject(error);
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        clearTimeout(deadline);
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
        resolve({ status: response.statusCode ?? 0, text, headers: responseHeaders });
        request.destroy();
      });
    });
    request.write(started);
  });
}

describe('the credential is checked before the body is read', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  const refusals: { what: string; path: string; headers: Record<string, string> }[] = [
    { what: 'a wrong API key', path: '/api/v1/events/batch', headers: { 'x-api-key': 'fbk_wrong' } },
    { what: 'no API key', path: '/api/v1/feedbacks', headers: {} },
    { what: 'a wrong admin token', path: '/api/v1/projects', headers: { authorization: 'Bearer fba_wrong' } },
    { what: 'a wrong operator token', path: '/api/v1/admin/accounts', headers: { authorization: 'Bearer nope' } },
  ];
  for (const { what, path, headers } of refusals) {
    it(`${what}: the 401 arrives while the body is unfinished`, async () => {
      const response = await postWithUnfinishedBody(path, headers);
      expect(response.status).toBe(401);
      expect(JSON.parse(response.text)).toMatchObject({ error: true, reason: expect.any(String), message: expect.any(String) });
      assertDocumented({ method: 'POST', path, status: response.status, headers: response.headers, text: response.text });
    });
  }

  it('a suspended project: its 403 arrives while the body is unfinished', async () => {
    const suspended = await createProject(server, { plan: 'pro' });
    await setSuspended(server, suspended, true);
    const response = await postWithUnfinishedBody('/api/v1/events/batch', { 'x-api-key': suspended.apiKey });
    expect(response.status).toBe(403);
  });

  it('with a valid key the body is read as before: an oversized one is a 413, a broken one a 400', async () => {
    const tooLarge = await postWithUnfinishedBody('/api/v1/feedbacks', { 'x-api-key': project.apiKey }, 2 * 1024 * 1024);
    expect(tooLarge.status).toBe(413);
    const broken = await server.request('POST', '/api/v1/feedbacks', { apiKey: project.apiKey, rawBody: '{"title":' });
    expect(broken.status).toBe(400);
    expect(broken.body).toEqual({ error: true, reason: 'body: invalid JSON', message: 'body: invalid JSON' });
    const created = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: project.apiKey,
      body: { title: 'Read after auth', description: 'd', category: 'other', user_id: 'u1' },
    });
    expect(created.status).toBe(200);
  });
});

/*
 * The origin project's Swift SDK (SwiftlyFeedbackKit-Swift-SDK, docs/clients.md): getFeedback(status:)
 * builds `feedbacks?status=in_progress` and appends it with `appendingPathComponent`, which
 * percent-encodes the `?`. URLSession then sends the request below; it must be answered as the
 * query it meant.
 */
describe('the origin Swift SDK’s filtered list: GET /feedbacks%3Fstatus=…', () => {
  let project: TestProject;
  let inProgress: { id: string };
  let inProgressBug: { id: string };
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    inProgress = await createFeedback(server, project, { title: 'Started' });
    inProgressBug = await createFeedback(server, project, { title: 'Started bug', category: 'bug_report' });
    await createFeedback(server, project, { title: 'Still pending' });
    for (const item of [inProgress, inProgressBug]) {
      const moved = await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${item.id}`, {
        bearer: project.account.adminToken,
        body: { status: 'in_progress' },
      });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    }
  });

  /** The bytes URLSession writes for the SDK's APIClient.makeRequest (a GET: no body). */
  const swiftRequest = (target: string) =>
    [
      `GET ${target} HTTP/1.1`,
      `Host: ${new URL(server.url).host}`,
      'Content-Type: application/json',
      `X-API-Key: ${project.apiKey}`,
      'X-User-Id: ios-user-1',
      'Accept: */*',
      'Accept-Language: en-GB,en;q=0.9',
      'Accept-Encoding: gzip, deflate, br',
      'User-Agent: Demo/1 CFNetwork/1494.0.7 Darwin/23.4.0',
      'Connection: keep-alive',
      '',
      '',
    ].join('\r\n');

  const listed = async (target: string, meant: string) => {
    const response = await rawRequest(server.url, swiftRequest(target));
    // The answer is the documented one of the request it stands for.
    assertDocumented({ method: 'GET', path: meant, status: response.status, headers: response.headers, text: response.text });
    expect(response.status, response.text).toBe(200);
    return (response.body as { id: string; status: string }[]).map((item) => item.id).sort();
  };

  it('answers GET /feedbacks%3Fstatus=in_progress as GET /feedbacks?status=in_progress', async () => {
    const expected = [inProgress.id, inProgressBug.id].sort();
    expect(await listed('/api/v1/feedbacks%3Fstatus=in_progress', '/api/v1/feedbacks?status=in_progress')).toEqual(expected);
    expect(await listed('/api/v1/feedbacks%3fstatus=in_progress', '/api/v1/feedbacks?status=in_progress')).toEqual(expected);
    expect(await listed('/api/v1/feedbacks?status=in_progress', '/api/v1/feedbacks?status=in_progress')).toEqual(expected);
  });

  it('reads the rest of the path as the whole query: status and category together', async () => {
    const target = '/api/v1/feedbacks%3Fstatus=in_progress&category=bug_report';
    expect(await listed(target, '/api/v1/feedbacks?status=in_progress&category=bug_report')).toEqual([inProgressBug.id]);
  });

  it('leaves an encoded ? inside a path parameter alone: a user id may contain one', async () => {
    const registered = await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'who?me' } });
    expect(registered.status).toBe(200);
    const read = await server.request('GET', '/api/v1/users/who%3Fme', { apiKey: project.apiKey });
    expect(read.status, JSON.stringify(read.body)).toBe(200);
    expect(read.body.user_id).toBe('who?me');
  });
});
