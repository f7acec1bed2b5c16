import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compileErrors, dereference, validate as validateOpenApi } from '@readme/openapi-parser';
import type Koa from 'koa';
import type { OpenAPIV3 } from 'openapi-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildApp } from '../../src/api/app.js';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import type { AppState } from '../../src/api/state.js';
import { eventually } from '../helpers/eventually.js';
import { createAccount, createProject } from '../helpers/factories.js';
import { type ObservedResponse, OpenApiViolation, openApiValidator, takeViolations } from '../helpers/openapi-validator.js';
import { type RequestOptions, requestTo, useTestServer } from '../helpers/server.js';

/*
 * SPEC 9: the OpenAPI 3.0 document. It is valid (checked by @readme/openapi-parser), it lists
 * exactly the routes Koa has, and real responses, obtained over HTTP, validate against the
 * schema the document gives for their path, method and status. That last check runs on every
 * response of the whole suite (helpers/openapi-validator.ts, called by the request helpers); this
 * file calls each operation at least once and proves the check refuses what it should.
 */

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];
type Document = OpenAPIV3.Document;
type Operation = OpenAPIV3.OperationObject;

const server = useTestServer();
let yamlText: string;
/** The document as served. */
let document: Document;
/** The same, with every $ref resolved (for validating bodies). */
let resolved: Document;

beforeAll(async () => {
  const response = await server.request<string>('GET', '/openapi/openapi.yaml');
  expect(response.status).toBe(200);
  yamlText = response.body;
  document = parseYaml(yamlText) as Document;
  resolved = await dereference(structuredClone(document));
});

// ---------------------------------------------------------------------------------------------
// Helpers

function operationOf(doc: Document, method: Method, path: string): Operation {
  const operation = (doc.paths[path] as Record<string, Operation> | undefined)?.[method];
  if (!operation) throw new Error(`the document has no ${method.toUpperCase()} ${path}`);
  return operation;
}

function serversOf(doc: Document, path: string, operation: Operation): string[] {
  const servers = operation.servers ?? doc.paths[path]?.servers ?? doc.servers ?? [{ url: '/' }];
  return servers.map((s) => s.url.replace(/\/$/, ''));
}

type CallOptions = RequestOptions & { params?: Record<string, string>; query?: Record<string, string> };

/**
 * Calls the operation `method path` of the document over HTTP (at its first server) and checks the
 * status; request() has already validated the response against the document (openapi-validator.ts).
 */
async function call(method: Method, path: string, status: number, options: CallOptions = {}) {
  const operation = operationOf(document, method, path);
  const base = serversOf(document, path, operation)[0] ?? '';
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = options.params?.[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return encodeURIComponent(value);
  });
  const query = options.query ? `?${new URLSearchParams(options.query)}` : '';
  const response = await server.request(method.toUpperCase(), `${base}${filled}${query}`, options);
  expect(response.status, `${method.toUpperCase()} ${path}: ${JSON.stringify(response.body)}`).toBe(status);
  expect(openApiValidator().match(method, `${base}${filled}`)?.template).toBe(`${base}${path}`);
  return response;
}

/** `GET /api/v1/feedbacks/{id}` style keys of every route Koa would answer. */
function koaRoutes(app: Koa<AppState>): string[] {
  const routes = new Set<string>();
  for (const middleware of app.middleware) {
    const router = (middleware as { router?: { stack: { methods: string[]; path: string | RegExp }[] } }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method === 'HEAD') continue; // added by Koa for every GET
        routes.add(`${method} ${String(layer.path).replace(/:(\w+)/g, '{$1}')}`);
      }
    }
  }
  return [...routes].sort();
}

/** The same keys for every operation of the document, at each of its servers. */
function documentRoutes(doc: Document): string[] {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation>)[method];
      if (!operation) continue;
      for (const base of serversOf(doc, path, operation)) routes.add(`${method.toUpperCase()} ${base}${path}`);
    }
  }
  return [...routes].sort();
}

function* operations(doc: Document): Generator<[string, Method, Operation]> {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const operation = (item as Record<string, Operation>)[method];
      if (operation) yield [path, method, operation];
    }
  }
}

function propertyNames(schema: unknown, seen = new WeakSet<object>()): string[] {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  const own = Object.keys((node.properties as object | undefined) ?? {});
  const nested = [
    ...Object.values((node.properties as object | undefined) ?? {}),
    node.items,
    node.additionalProperties,
    ...((node.anyOf as unknown[] | undefined) ?? []),
    ...((node.oneOf as unknown[] | undefined) ?? []),
    ...((node.allOf as unknown[] | undefined) ?? []),
  ];
  return [...own, ...nested.flatMap((child) => propertyNames(child, seen))];
}

// ---------------------------------------------------------------------------------------------

describe('the OpenAPI document', () => {
  it('is served as YAML at /openapi/openapi.yaml and under /api/v1, without authentication', async () => {
    for (const path of ['/openapi/openapi.yaml', '/api/v1/openapi/openapi.yaml']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/yaml/);
      expect(await response.text()).toBe(yamlText);
    }
  });

  it('is a valid OpenAPI 3.0 document, version 1.0.0, based at /api/v1', async () => {
    const result = await validateOpenApi(structuredClone(document));
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(document.openapi).toMatch(/^3\.0\.\d+$/);
    expect(document.info.version).toBe('1.0.0');
    expect(document.servers?.[0]?.url).toBe('/api/v1');
  });

  it('declares the three credentials and gives every operation its security', () => {
    expect(document.components?.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      AdminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      OperatorToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    for (const [path, method, operation] of operations(document)) {
      expect(operation.security, `${method} ${path}`).toBeDefined();
      const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
      if (path.startsWith('/admin/')) expect(schemes, `${method} ${path}`).toEqual(['OperatorToken']);
      else if (path.startsWith('/projects') || path === '/account') expect(schemes, `${method} ${path}`).toEqual(['AdminToken']);
      else if (
        ['/healthz', '/readyz', '/openapi/openapi.yaml'].includes(path) ||
        path.startsWith('/docs') ||
        path.startsWith('/unsubscribe/') ||
        path.startsWith('/boards/') ||
        // A published saved query checks its own read token (docs/project-sql.md, "Endpoints").
        path.startsWith('/q/') ||
        // A tracker's webhook checks its signature (docs/integrations.md).
        /^\/integrations\/(github|linear)\/webhook$/.test(path)
      ) {
        expect(schemes, `${method} ${path}`).toEqual([]);
      } else expect(schemes, `${method} ${path}`).toEqual(['ApiKeyAuth']);
    }
  });

  it('lists every route of the Koa app, and only those', () => {
    const app = buildApp({ ...server.services, operatorToken: server.operatorToken });
    const registered = koaRoutes(app);
    expect(registered.length).toBeGreaterThan(30);
    expect(documentRoutes(document)).toEqual(registered);
  });

  it('describes request bodies in camelCase and says snake_case is accepted; responses are snake_case', () => {
    for (const [path, method, operation] of operations(resolved)) {
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      if (body) {
        expect(body.description, `${method} ${path}`).toMatch(/snake_case/);
        for (const name of propertyNames(body.content['application/json']?.schema)) {
          expect(name, `${method} ${path} request`).toMatch(/^[a-z][a-zA-Z0-9]*$/);
        }
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = (response as OpenAPIV3.ResponseObject).content?.['application/json']?.schema;
        for (const name of propertyNames(schema)) expect(name, `${method} ${path} ${status}`).toMatch(/^[a-z][a-z0-9_]*$/);
      }
    }
  });

  it('documents the metrics query parameters, read verbatim', () => {
    const names = (method: Method, path: string) =>
      ((operationOf(resolved, method, path).parameters ?? []) as OpenAPIV3.ParameterObject[])
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort();
    const common = ['date_from', 'date_to', 'event'];
    for (const prefix of ['', '/projects/{id}']) {
      expect(names('get', `${prefix}/metrics/summary`)).toEqual([...common, 'compare', 'filters', 'measures'].sort());
      expect(names('get', `${prefix}/metrics/timeseries`)).toEqual([...common, 'compare', 'filters', 'interval', 'measures'].sort());
      expect(names('get', `${prefix}/metrics/breakdown`)).toEqual(
        [...common, 'compare', 'dimension', 'filters', 'limit', 'measures'].sort(),
      );
      expect(names('get', `${prefix}/metrics/events`)).toEqual([...common, 'cursor', 'limit', 'user_id'].sort());
    }
    expect(names('get', '/projects/{id}/event-properties')).toEqual(['date_from', 'date_to', 'event']);
    expect(names('get', '/feedbacks')).toEqual(['category', 'includeMerged', 'limit', 'offset', 'sort', 'status']);
  });

  // Redocly's operation-4xx-response (npm run lint:openapi): health and docs listed none. The query
  // check refuses a NUL before every router, so their documented 400 is a real answer.
  it('documents at least one 4XX on every operation; the 400 of health and docs is answered', async () => {
    const without4xx: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = (item as Record<string, Operation | undefined>)[method];
        if (operation && !Object.keys(operation.responses).some((status) => status.startsWith('4'))) {
          without4xx.push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    expect(without4xx).toEqual([]);
    for (const path of ['/healthz', '/readyz', '/openapi/openapi.yaml', '/docs']) {
      const response = await call('get', path, 400, { query: { x: 'a\u0000b' } });
      expect(response.body).toMatchObject({ error: true, reason: expect.stringContaining('x'), message: expect.stringContaining('x') });
    }
  });

  it('is the document the response check validates against (built by the same function)', () => {
    expect(document).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });
});

describe('the response check of the test helpers', () => {
  const validator = openApiValidator();
  const id = '0190f5e4-7b7a-7cc0-8b0e-2f1d9a6c5e11';
  const feedback = {
    id,
    title: 'Dark mode',
    description: 'Please.',
    status: 'pending',
    category: 'feature_request',
    user_id: 'u1',
    user_email: null,
    vote_count: 1,
    has_voted: false,
    comment_count: 0,
    total_mrr: null,
    created_at: '2026-01-31T12:00:00Z',
    updated_at: '2026-01-31T12:00:00Z',
    rejection_reason: null,
    merged_into_id: null,
    merged_at: null,
    merged_feedback_ids: null,
  };
  const json = (status: number, body: unknown, method = 'GET', path = `/api/v1/feedbacks/${id}`): ObservedResponse => ({
    method,
    path,
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8' }),
    text: JSON.stringify(body),
  });

  it('matches concrete paths to the document’s templates, the most literal first, at each server', () => {
    expect(validator.match('GET', `/api/v1/feedbacks/${id}?x=1`)?.template).toBe('/api/v1/feedbacks/{id}');
    expect(validator.match('POST', `/api/v1/feedbacks/${id}/votes`)?.template).toBe('/api/v1/feedbacks/{id}/votes');
    expect(validator.match('GET', `/api/v1/projects/${id}/metrics/summary`)?.template).toBe('/api/v1/projects/{id}/metrics/summary');
    expect(validator.match('GET', '/openapi/openapi.yaml')?.template).toBe('/openapi/openapi.yaml');
    expect(validator.match('GET', '/api/v1/openapi/openapi.yaml')?.template).toBe('/api/v1/openapi/openapi.yaml');
    expect(validator.match('GET', '/docs/swagger-ui.css')?.template).toBe('/docs/{asset}');
    expect(validator.match('GET', '/healthz')?.template).toBe('/healthz');
    expect(validator.match('GET', '/api/v1/healthz')).toBeUndefined();
    expect(validator.match('PUT', `/api/v1/feedbacks/${id}`)).toBeUndefined();
  });

  it('accepts a conforming body, nulls where the document says nullable', () => {
    expect(validator.check(json(200, feedback))).toEqual([]);
    expect(validator.check(json(200, { ...feedback, user_email: 'a@example.com', merged_feedback_ids: [id], total_mrr: 9.5 }))).toEqual([]);
    expect(validator.check(json(404, { error: true, reason: 'feedback not found', message: 'feedback not found' }))).toEqual([]);
  });

  it('refuses a body that violates the schema: a missing, an undocumented, a mistyped or a null field', () => {
    const { vote_count: _, ...withoutVoteCount } = feedback;
    expect(validator.check(json(200, withoutVoteCount)).join()).toMatch(/must have required property 'vote_count'/);
    expect(validator.check(json(200, { ...feedback, voteCount: 1 })).join()).toMatch(/must NOT have additional properties.*voteCount/);
    expect(validator.check(json(200, { ...feedback, vote_count: '1' })).join()).toMatch(/\/vote_count must be integer/);
    expect(validator.check(json(200, { ...feedback, title: null })).join()).toMatch(/\/title must be string/);
    expect(validator.check(json(200, { ...feedback, status: 'done' })).join()).toMatch(
      /\/status must be equal to one of the allowed values/,
    );
    expect(validator.check(json(200, { ...feedback, created_at: 'yesterday' })).join()).toMatch(
      /\/created_at must match format "date-time"/,
    );
    // Timestamps are RFC 3339 in whole seconds (the origin's Swift SDK decodes no fraction).
    expect(validator.check(json(200, { ...feedback, created_at: '2026-01-31T12:00:00.052Z' })).join()).toMatch(
      /\/created_at must match pattern/,
    );
    // SPEC 7.1 vs 7.2: the metrics body is not the server-wide one.
    expect(validator.check(json(404, { error: { code: 'METRICS_INVALID_DATE', message: 'x' } })).join()).toMatch(/\/error must be boolean/);
    expect(validator.check(json(404, { error: true, reason: 'x', code: 'X' })).join()).toMatch(/additional properties/);
  });

  it('refuses an undocumented status, Content-Type or route, and a body that is not JSON', () => {
    expect(validator.check(json(418, { error: true, reason: 'teapot', message: 'teapot' }, 'GET', '/healthz')).join()).toMatch(
      /GET \/healthz does not document status 418/,
    );
    expect(validator.check({ ...json(200, feedback), headers: new Headers({ 'content-type': 'text/plain' }) }).join()).toMatch(
      /Content-Type text\/plain is not documented \(documented: application\/json\)/,
    );
    expect(validator.check({ ...json(200, feedback), text: '{oops' }).join()).toMatch(/not JSON/);
    expect(validator.check(json(200, { ok: true }, 'GET', '/no/such/route')).join()).toMatch(/an unknown route must answer 404, not 200/);
    expect(validator.check(json(404, { error: true, reason: 'no route', message: 'no route' }, 'GET', '/no/such/route'))).toEqual([]);
    // A method the path lacks: the path's `default` (the server-wide body).
    expect(validator.check(json(404, { error: true, reason: 'no route', message: 'no route' }, 'PUT'))).toEqual([]);
    expect(validator.check(json(404, feedback, 'PUT')).join()).toMatch(
      /PUT \/api\/v1\/feedbacks\/\{id\} \(no such operation; GET's default response\)/,
    );
  });

  it('fails the request: request() throws a message naming the request, status, body and errors', async () => {
    // A stand-in server that answers a Feedback without its vote_count: the helpers must refuse it.
    const { vote_count: _, ...broken } = feedback;
    const fake: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(broken));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      const error = await requestTo(base, 'GET', `/api/v1/feedbacks/${id}`).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenApiViolation);
      const message = (error as Error).message;
      expect(message).toContain(`GET /api/v1/feedbacks/${id} (status 200) violates the OpenAPI document`);
      expect(message).toContain('GET /api/v1/feedbacks/{id} 200 application/json');
      expect(message).toContain("must have required property 'vote_count'");
      expect(message).toContain('"title":"Dark mode"');
      // Kept for the afterEach safety net too (taken here, as this test expects the violation).
      expect(takeViolations()).toEqual([message]);
      // The opt-out, for responses that cannot be in the document.
      const skipped = await requestTo(base, 'GET', `/api/v1/feedbacks/${id}`, { skipOpenApiCheck: 'a stand-in server' });
      expect(skipped.status).toBe(200);
      expect(takeViolations()).toEqual([]);
    } finally {
      await new Promise((resolve) => fake.close(resolve));
    }
  });
});

describe('GET /docs', () => {
  it('renders the document with Swagger UI, every file served locally', async () => {
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    const html = await page.text();
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      expect(url, 'no CDN').toMatch(/^\/docs\//);
      const asset = await fetch(`${server.url}${url}`);
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get('content-type'), url).toMatch(url.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect((await asset.text()).length, url).toBeGreaterThan(50);
    }
    const init = await (await fetch(`${server.url}/docs/swagger-initializer.js`)).text();
    expect(init).toContain('"/openapi/openapi.yaml"');
    expect(init).toContain('validatorUrl: null');
    const traversal = await server.request('GET', '/docs/..%2Fpackage.json');
    expect(traversal.status).toBe(404);
    const unknown = await server.request('GET', '/docs/index.html');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  });

  it('carries X-Content-Type-Options: nosniff, like every API answer (JSON, errors, the document)', async () => {
    const account = await createAccount(server, 'pro');
    const project = await createProject(server, { account });
    const answers = [
      await fetch(`${server.url}/docs`),
      await fetch(`${server.url}/docs/swagger-initializer.js`),
      await fetch(`${server.url}/openapi/openapi.yaml`),
      await fetch(`${server.url}/api/v1/feedbacks`, { headers: { 'x-api-key': project.apiKey } }),
      await fetch(`${server.url}/api/v1/feedbacks`),
      await fetch(`${server.url}/api/v1/metrics/summary?date_from=nope`, { headers: { 'x-api-key': project.apiKey } }),
      await fetch(`${server.url}/api/v1/no/such/route`),
      await fetch(`${server.url}/healthz`),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 401, 400, 404, 200]);
    for (const answer of answers) expect(answer.headers.get('x-content-type-options'), answer.url).toBe('nosniff');
  });
});

describe('real responses validate against the document', () => {
  const DAY = 24 * 3600 * 1000;
  const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

  let adminToken: string;
  let accountId: string;
  let projectId: string;
  let apiKey: string;
  let feedbackId: string;
  let otherFeedbackId: string;

  it('operator and management operations', async () => {
    const account = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `owner-${randomUUID()}@example.com`, plan: 'pro' },
    });
    adminToken = account.body.admin_token;
    accountId = account.body.id;
    await call('patch', '/admin/accounts/{id}', 200, { bearer: server.operatorToken, params: { id: accountId }, body: { plan: 'team' } });
    await call('post', '/admin/accounts', 409, { bearer: server.operatorToken, body: { email: account.body.email } });
    await call('post', '/admin/accounts', 400, { bearer: server.operatorToken, body: { email: 'not an email' } });
    await call('post', '/admin/accounts', 401, { body: { email: `x-${randomUUID()}@example.com` } });

    const project = await call('post', '/projects', 200, { bearer: adminToken, body: { name: 'OpenAPI app' } });
    projectId = project.body.id;
    await call('get', '/projects', 200, { bearer: adminToken });
    await call('get', '/projects/{id}', 200, { bearer: adminToken, params: { id: projectId } });
    await call('get', '/projects/{id}', 404, { bearer: adminToken, params: { id: randomUUID() } });
    await call('patch', '/projects/{id}', 200, { bearer: adminToken, params: { id: projectId }, body: { name: 'Renamed' } });
    const rotated = await call('post', '/projects/{id}/api-keys', 200, { bearer: adminToken, params: { id: projectId } });
    apiKey = rotated.body.api_key;
    await call('get', '/projects', 401, { bearer: 'fba_not_a_token' });

    const free = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `free-${randomUUID()}@example.com` },
    });
    await call('post', '/projects', 200, { bearer: free.body.admin_token, body: { name: 'Only one' } });
    await call('post', '/projects', 402, { bearer: free.body.admin_token, body: { name: 'One too many' } });
    await call('get', '/projects/{id}', 403, { bearer: free.body.admin_token, params: { id: projectId } });
  });

  it('feedback, votes and comments', async () => {
    const created = await call('post', '/feedbacks', 200, {
      apiKey,
      body: { title: 'Dark mode', description: 'Please.', category: 'feature_request', userId: 'u1', userEmail: 'u1@example.com' },
    });
    feedbackId = created.body.id;
    const other = await call('post', '/feedbacks', 200, {
      apiKey,
      body: { title: 'Crash', description: 'On start.', category: 'bug_report', user_id: 'u2' },
    });
    otherFeedbackId = other.body.id;
    await call('post', '/feedbacks', 400, { apiKey, body: { title: '', description: 'x', category: 'other', userId: 'u1' } });
    await call('post', '/feedbacks', 401, { body: { title: 'x', description: 'x', category: 'other', userId: 'u1' } });

    await call('get', '/feedbacks', 200, { apiKey, userId: 'u1', query: { sort: 'newest', includeMerged: 'true' } });
    await call('get', '/feedbacks', 400, { apiKey, query: { sort: 'sideways' } });
    await call('get', '/feedbacks/{id}', 200, { apiKey, userId: 'u1', params: { id: feedbackId } });
    await call('get', '/feedbacks/{id}', 404, { apiKey, params: { id: randomUUID() } });

    await call('post', '/feedbacks/{id}/votes', 200, {
      apiKey,
      params: { id: feedbackId },
      body: { userId: 'voter', notifyStatusChange: true },
    });
    await call('post', '/feedbacks/{id}/votes', 409, { apiKey, params: { id: feedbackId }, body: { userId: 'voter' } });
    await call('delete', '/feedbacks/{id}/votes', 200, { apiKey, params: { id: feedbackId }, body: { userId: 'voter' } });
    await call('post', '/feedbacks/{id}/votes', 400, { apiKey, params: { id: feedbackId }, body: {} });

    await call('post', '/feedbacks/{id}/comments', 200, {
      apiKey,
      params: { id: feedbackId },
      body: { content: 'Yes please', userId: 'u3' },
    });
    await call('post', '/feedbacks/{id}/comments', 200, {
      apiKey,
      params: { id: feedbackId },
      body: { content: 'On it', userId: 'team', isAdmin: true },
    });
    await call('get', '/feedbacks/{id}/comments', 200, { apiKey, params: { id: feedbackId } });
    await call('get', '/feedbacks/{id}/comments', 404, { apiKey, params: { id: randomUUID() } });

    // A method the path does not have (not in the document, so called directly): the path's `default` response.
    const wrongMethod = await server.request('PUT', `/api/v1/feedbacks/${feedbackId}`, { apiKey, body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('HEAD, GET');
    expect(wrongMethod.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  });

  it('project feedback management: status, rejection, merge', async () => {
    await call('get', '/projects/{id}/feedbacks', 200, { bearer: adminToken, params: { id: projectId }, query: { includeMerged: '1' } });
    await call('patch', '/projects/{id}/feedbacks/{feedbackId}', 200, {
      bearer: adminToken,
      params: { id: projectId, feedbackId: otherFeedbackId },
      body: { status: 'rejected', rejectionReason: 'Out of scope' },
    });
    await call('patch', '/projects/{id}/feedbacks/{feedbackId}', 400, {
      bearer: adminToken,
      params: { id: projectId, feedbackId: otherFeedbackId },
      body: { status: 'approved', rejectionReason: 'no' },
    });
    const merged = await call('post', '/projects/{id}/feedbacks/{feedbackId}/merge', 200, {
      bearer: adminToken,
      params: { id: projectId, feedbackId: otherFeedbackId },
      body: { intoId: feedbackId },
    });
    expect(merged.body.merged_into_id).toBe(feedbackId);
    await call('post', '/projects/{id}/feedbacks/{feedbackId}/merge', 409, {
      bearer: adminToken,
      params: { id: projectId, feedbackId: otherFeedbackId },
      body: { intoId: feedbackId },
    });
    const target = await call('get', '/feedbacks/{id}', 200, { apiKey, params: { id: feedbackId } });
    expect(target.body.merged_feedback_ids).toEqual([otherFeedbackId]);
    await call('get', '/feedbacks', 200, { apiKey, query: { includeMerged: 'true', status: 'rejected' } });
  });

  it('SDK users and events', async () => {
    await call('post', '/users/register', 200, { apiKey, body: { userId: 'u1', mrr: 9.99 } });
    const cleared = await call('post', '/users/register', 200, { apiKey, body: { user_id: 'u1', mrr: null } });
    expect(cleared.body.mrr).toBeNull();
    await call('post', '/users/register', 400, { apiKey, body: { userId: 'u1', mrr: -1 } });

    const tracked = await call('post', '/events/track', 200, {
      apiKey,
      body: {
        eventName: 'feedback_list',
        userId: 'u1',
        properties: { plan: 'pro', nested: { a: [1, null] } },
        timestamp: new Date(Date.now() - DAY).toISOString().replace('Z', '+00:00'),
        eventId: randomUUID(),
      },
    });
    expect(tracked.body.properties).toEqual({ plan: 'pro', nested: { a: [1, null] } });
    const bare = await call('post', '/events/track', 200, { apiKey, body: { event_name: 'custom_open', user_id: 'u2' } });
    expect(bare.body.properties).toBeNull();
    await call('post', '/events/track', 400, { apiKey, body: { eventName: '', userId: 'u1' } });
    await call('post', '/events/batch', 200, {
      apiKey,
      body: {
        events: [
          { eventName: 'feedback_detail', userId: 'u1', properties: { plan: 'free' } },
          { event_name: 'submit_feedback', user_id: 'u3', event_id: randomUUID() },
          { eventName: 'purchase', userId: 'u2', properties: { amount: 9.99 } },
        ],
      },
    });
    await call('post', '/events/batch', 400, { apiKey, body: { events: [] } });
    await server.eventsVisible();
  });

  it('every metrics operation, on both surfaces', async () => {
    const window = { date_from: daysAgo(10), date_to: daysAgo(0) };
    const surfaces: [string, CallOptions][] = [
      ['', { apiKey }],
      ['/projects/{id}', { bearer: adminToken, params: { id: projectId } }],
    ];
    for (const [prefix, options] of surfaces) {
      await call('get', `${prefix}/metrics/summary`, 200, { ...options, query: window });
      await call('get', `${prefix}/metrics/timeseries`, 200, { ...options, query: { ...window, interval: 'week' } });
      await call('get', `${prefix}/metrics/timeseries`, 200, { ...options, query: { interval: 'hour', date_from: daysAgo(1) } });
      await call('get', `${prefix}/metrics/breakdown`, 200, { ...options, query: { ...window, dimension: 'property.plan' } });
      await call('get', `${prefix}/metrics/breakdown`, 200, { ...options, query: { dimension: 'event_name', measures: 'event_count' } });
      await call('get', `${prefix}/metrics/breakdown`, 200, { ...options, query: { dimension: 'status' } });
      const page = await call('get', `${prefix}/metrics/events`, 200, { ...options, query: { ...window, limit: '2' } });
      expect(page.body.next_cursor).toEqual(expect.any(String));
      await call('get', `${prefix}/metrics/events`, 200, { ...options, query: { cursor: page.body.next_cursor, user_id: 'u1' } });
      await call('get', `${prefix}/metrics/summary`, 400, { ...options, query: { date_from: '2026-02-30' } });
      await call('get', `${prefix}/metrics/timeseries`, 400, { ...options, query: { interval: 'fortnight' } });
      await call('get', `${prefix}/metrics/breakdown`, 400, { ...options, query: {} });
      await call('get', `${prefix}/metrics/events`, 400, { ...options, query: { cursor: 'nope' } });
    }
    const admin = await call('get', '/projects/{id}/metrics/summary', 200, { bearer: adminToken, params: { id: projectId } });
    expect(Object.keys(admin.body.measures)).toContain('total_mrr');
    await call('get', '/metrics/summary', 403, { apiKey, query: { measures: 'total_mrr' } });
    await call('get', '/metrics/summary', 401, {});
    await call('get', '/projects/{id}/metrics/summary', 404, { bearer: adminToken, params: { id: randomUUID() } });
    await call('get', '/projects/{id}/metrics/summary', 401, { params: { id: projectId } });

    // Below Pro: narrowed 200s and the 402s.
    const free = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `m-${randomUUID()}@example.com` },
    });
    const freeProject = await call('post', '/projects', 200, { bearer: free.body.admin_token, body: { name: 'Free app' } });
    const freeKey = freeProject.body.api_key as string;
    const narrowed = await call('get', '/metrics/summary', 200, { apiKey: freeKey, query: { date_from: daysAgo(100) } });
    expect(narrowed.body).toMatchObject({ event_scope: 'predefined_only', retention_clamped: true });
    await call('get', '/metrics/events', 402, { apiKey: freeKey });
    await call('get', '/metrics/breakdown', 402, { apiKey: freeKey, query: { dimension: 'event_name' } });
    await call('get', '/metrics/summary', 402, { apiKey: freeKey, query: { event: 'custom_open' } });
    await call('get', '/projects/{id}/metrics/events', 402, { bearer: free.body.admin_token, params: { id: freeProject.body.id } });
    await call('get', '/projects/{id}/metrics/summary', 403, { bearer: free.body.admin_token, params: { id: projectId } });
  });

  it('suspension: the operator answer and the 403 of the key surfaces', async () => {
    await call('patch', '/admin/projects/{id}', 200, {
      bearer: server.operatorToken,
      params: { id: projectId },
      body: { suspended: true },
    });
    try {
      await call('get', '/feedbacks', 403, { apiKey });
      await call('get', '/metrics/summary', 403, { apiKey });
      await call('get', '/metrics/events', 403, { apiKey });
      await call('post', '/events/track', 403, { apiKey, body: { eventName: 'x', userId: 'u' } });
    } finally {
      await call('patch', '/admin/projects/{id}', 200, {
        bearer: server.operatorToken,
        params: { id: projectId },
        body: { suspended: false },
      });
    }
    await call('patch', '/admin/projects/{id}', 404, {
      bearer: server.operatorToken,
      params: { id: randomUUID() },
      body: { suspended: true },
    });
  });

  it('notification deliveries and unsubscribing', async () => {
    const account = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `notify-${randomUUID()}@example.com`, plan: 'team' },
    });
    const bearer = account.body.admin_token as string;
    const project = await call('post', '/projects', 200, { bearer, body: { name: 'Notified app' } });
    const id = project.body.id as string;
    // The test server has no SMTP_URL (emails become .eml files) and no ALLOW_PRIVATE_WEBHOOKS
    // (a webhook to 127.0.0.1 fails at once): one delivered and one failed delivery.
    await call('post', '/projects/{id}/members', 200, { bearer, params: { id }, body: { email: `member-${randomUUID()}@example.com` } });
    await call('post', '/projects/{id}/integrations', 200, {
      bearer,
      params: { id },
      body: { kind: 'webhook', url: 'http://127.0.0.1:9/hook' },
    });
    const created = await call('post', '/feedbacks', 200, {
      apiKey: project.body.api_key,
      body: { title: 'Notify me', description: 'x', category: 'other', userId: 'u1' },
    });
    let deliveries: any[] = [];
    await eventually('both deliveries settled', 10_000, async () => {
      deliveries = (await call('get', '/projects/{id}/deliveries', 200, { bearer, params: { id } })).body;
      return deliveries.length === 2 && deliveries.every((d) => d.status !== 'pending');
    }).catch(() => undefined); // the expectations below show what was there
    const failed = deliveries.find((d) => d.status === 'failed');
    const delivered = deliveries.find((d) => d.status === 'delivered');
    expect(failed?.channel).toBe('webhook');
    expect(delivered?.channel).toBe('email');
    await call('get', '/projects/{id}/deliveries', 200, { bearer, params: { id }, query: { status: 'failed', limit: '1', offset: '0' } });
    await call('get', '/projects/{id}/deliveries', 400, { bearer, params: { id }, query: { limit: '0' } });
    await call('get', '/projects/{id}/deliveries', 401, { params: { id } });
    await call('get', '/projects/{id}/deliveries', 404, { bearer, params: { id: randomUUID() } });
    await call('post', '/projects/{id}/deliveries/{deliveryId}/retry', 409, { bearer, params: { id, deliveryId: delivered.id } });
    await call('post', '/projects/{id}/deliveries/{deliveryId}/retry', 404, { bearer, params: { id, deliveryId: randomUUID() } });
    await call('post', '/projects/{id}/deliveries/{deliveryId}/retry', 200, { bearer, params: { id, deliveryId: failed.id } });

    await call('post', '/feedbacks/{id}/votes', 200, {
      apiKey: project.body.api_key,
      params: { id: created.body.id },
      body: { userId: 'u2', email: 'voter@example.com', notifyStatusChange: true },
    });
    const [vote] = await server.sql<{ token: string }[]>`
      select unsubscribe_token::text as token from votes where feedback_id = ${created.body.id} and user_id = 'u2'`;
    const token = vote!.token;
    await call('get', '/unsubscribe/{token}', 200, { params: { token } });
    await call('get', '/unsubscribe/{token}', 200, { params: { token }, headers: { accept: 'text/html' } });
    await call('post', '/unsubscribe/{token}', 200, { params: { token } });
    await call('post', '/unsubscribe/{token}', 200, { params: { token }, headers: { accept: 'text/html' } });
    await call('get', '/unsubscribe/{token}', 200, { params: { token }, headers: { accept: 'text/html' } });
    await call('get', '/unsubscribe/{token}', 404, { params: { token: randomUUID() } });
    await call('post', '/unsubscribe/{token}', 404, { params: { token: randomUUID() } });
  });

  it('team members and integrations', async () => {
    const team = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `team-${randomUUID()}@example.com`, plan: 'team' },
    });
    const bearer = team.body.admin_token as string;
    const project = await call('post', '/projects', 200, { bearer, body: { name: 'Team app' } });
    const id = project.body.id as string;

    const member = await call('post', '/projects/{id}/members', 200, {
      bearer,
      params: { id },
      body: { email: `m-${randomUUID()}@example.com` },
    });
    await call('post', '/projects/{id}/members', 409, { bearer, params: { id }, body: { email: member.body.email.toUpperCase() } });
    await call('post', '/projects/{id}/members', 400, { bearer, params: { id }, body: { email: 'nope' } });
    await call('get', '/projects/{id}/members', 200, { bearer: member.body.admin_token, params: { id } });
    await call('delete', '/projects/{id}/members/{memberId}', 404, { bearer, params: { id, memberId: randomUUID() } });
    await call('delete', '/projects/{id}/members/{memberId}', 200, { bearer, params: { id, memberId: member.body.id } });
    await call('get', '/projects/{id}/members', 401, { bearer: member.body.admin_token, params: { id } });

    const webhook = await call('post', '/projects/{id}/integrations', 200, {
      bearer,
      params: { id },
      body: { kind: 'webhook', url: 'https://example.com/hook', events: ['feedback.created'] },
    });
    expect(webhook.body.secret).toEqual(expect.any(String));
    const slack = await call('post', '/projects/{id}/integrations', 200, {
      bearer,
      params: { id },
      body: { kind: 'slack', url: 'https://hooks.slack.com/services/x', enabled: false },
    });
    expect(slack.body).not.toHaveProperty('secret');
    await call('post', '/projects/{id}/integrations', 400, { bearer, params: { id }, body: { kind: 'slack', url: 'javascript:alert(1)' } });
    await call('get', '/projects/{id}/integrations', 200, { bearer, params: { id } });
    await call('patch', '/projects/{id}/integrations/{integrationId}', 200, {
      bearer,
      params: { id, integrationId: webhook.body.id },
      body: { events: null, secret: 'a-new-secret-of-enough-length' },
    });
    await call('patch', '/projects/{id}/integrations/{integrationId}', 400, {
      bearer,
      params: { id, integrationId: slack.body.id },
      body: {},
    });
    await call('patch', '/projects/{id}/integrations/{integrationId}', 404, {
      bearer,
      params: { id, integrationId: randomUUID() },
      body: { enabled: true },
    });
    await call('delete', '/projects/{id}/integrations/{integrationId}', 200, { bearer, params: { id, integrationId: slack.body.id } });
    await call('delete', '/projects/{id}/integrations/{integrationId}', 404, { bearer, params: { id, integrationId: slack.body.id } });
    await call('get', '/projects/{id}/integrations', 403, { bearer: adminToken, params: { id } });

    await call('patch', '/admin/accounts/{id}', 200, {
      bearer: server.operatorToken,
      params: { id: team.body.id },
      body: { plan: 'free' },
    });
    await call('post', '/projects/{id}/integrations', 402, {
      bearer,
      params: { id },
      body: { kind: 'slack', url: 'https://hooks.slack.com/x' },
    });
    await call('patch', '/projects/{id}/integrations/{integrationId}', 402, {
      bearer,
      params: { id, integrationId: webhook.body.id },
      body: { enabled: false },
    });
    await call('post', '/projects/{id}/members', 402, { bearer, params: { id }, body: { email: `x-${randomUUID()}@example.com` } });
  });

  it('ad-hoc SQL and health', async () => {
    await call('post', '/admin/sql', 200, {
      bearer: server.operatorToken,
      body: { query: 'SELECT count() AS n, {p:UUID} AS project FROM events WHERE project_id = {p:UUID}', params: { p: projectId } },
    });
    await call('post', '/admin/sql', 400, { bearer: server.operatorToken, body: { query: 'DROP TABLE events' } });
    await call('get', '/healthz', 200);
    await call('get', '/readyz', 200);
  });
});
