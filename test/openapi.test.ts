import { randomUUID } from 'node:crypto';
import { compileErrors, dereference, validate as validateOpenApi } from '@readme/openapi-parser';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type Koa from 'koa';
import type { OpenAPIV3 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildApp } from '../src/api/app.js';
import type { AppState } from '../src/api/state.js';
import { startTestServer, type HttpResponse, type RequestOptions, type TestServer } from './helpers/server.js';

/*
 * SPEC 9: the OpenAPI 3.0 document. It is valid (checked by @readme/openapi-parser), it lists
 * exactly the routes Koa has, and real responses, obtained over HTTP, validate against the
 * schema the document gives for their path, method and status. Response schemas are checked
 * strictly here (an undocumented field fails), while the published document leaves objects open
 * so that adding a field later does not break clients.
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: Method[] = ['get', 'post', 'put', 'patch', 'delete'];
type Document = OpenAPIV3.Document;
type Operation = OpenAPIV3.OperationObject;

let server: TestServer;
let yamlText: string;
/** The document as served. */
let document: Document;
/** The same, with every $ref resolved (for validating bodies). */
let resolved: Document;

beforeAll(async () => {
  server = await startTestServer();
  const response = await fetch(`${server.url}/openapi/openapi.yaml`);
  expect(response.status).toBe(200);
  yamlText = await response.text();
  document = parseYaml(yamlText) as Document;
  resolved = await dereference(structuredClone(document));
});
afterAll(async () => {
  await server?.close();
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

/**
 * Test-only strictness: an object schema with properties and no additionalProperties refuses
 * undocumented fields. `{ nullable: true }` without a type (zod's unknown) means any value; Ajv
 * wants a type next to `nullable`, so it is dropped there.
 */
function strict(schema: unknown, seen = new WeakSet<object>()): void {
  if (schema === null || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  if (node.nullable !== undefined && node.type === undefined) delete node.nullable;
  if (node.type === 'object' && node.properties && node.additionalProperties === undefined) node.additionalProperties = false;
  for (const value of Object.values(node.properties ?? {})) strict(value, seen);
  for (const key of ['items', 'additionalProperties', 'not']) strict(node[key], seen);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const branch of (node[key] as unknown[] | undefined) ?? []) strict(branch, seen);
}

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
const validators = new Map<string, ValidateFunction>();

/** The JSON schema of a response: the one for its status, or the operation's `default`. */
function responseValidator(method: Method, path: string, status: number, options: { allowDefault?: boolean } = {}) {
  const key = `${method} ${path} ${status}`;
  const cached = validators.get(key);
  if (cached) return cached;
  const responses = operationOf(resolved, method, path).responses;
  const explicit = responses[String(status)] as OpenAPIV3.ResponseObject | undefined;
  if (!explicit && !options.allowDefault) throw new Error(`${method.toUpperCase()} ${path} does not document status ${status}`);
  const response = explicit ?? (responses.default as OpenAPIV3.ResponseObject | undefined);
  const schema = response?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`${method.toUpperCase()} ${path} ${status}: no application/json schema`);
  const copy = structuredClone(schema);
  strict(copy);
  const validator = ajv.compile(copy);
  validators.set(key, validator);
  return validator;
}

const describeErrors = (errors: ValidateFunction['errors']) =>
  (errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`).join('; ');

function expectConforms(method: Method, path: string, response: HttpResponse, options: { allowDefault?: boolean } = {}) {
  const validator = responseValidator(method, path, response.status, options);
  const valid = validator(response.body);
  expect(
    valid,
    `${method.toUpperCase()} ${path} ${response.status}: ${describeErrors(validator.errors)}\n${JSON.stringify(response.body, null, 2)}`,
  ).toBe(true);
}

type CallOptions = RequestOptions & { params?: Record<string, string>; query?: Record<string, string>; allowDefault?: boolean };

/**
 * Calls the operation `method path` of the document over HTTP (at its first server), checks the
 * status, and validates the body against the document's schema for that status.
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
  expectConforms(method, path, response, options.allowDefault ? { allowDefault: true } : {});
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
      else if (path.startsWith('/projects')) expect(schemes, `${method} ${path}`).toEqual(['AdminToken']);
      else if (['/healthz', '/readyz', '/openapi/openapi.yaml'].includes(path) || path.startsWith('/docs') || path.startsWith('/unsubscribe/')) {
        expect(schemes, `${method} ${path}`).toEqual([]);
      }
      else expect(schemes, `${method} ${path}`).toEqual(['ApiKeyAuth']);
    }
  });

  it('lists every route of the Koa app, and only those', () => {
    const app = buildApp({ ...server.ctx, operatorToken: server.operatorToken });
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
      expect(names('get', `${prefix}/metrics/summary`)).toEqual([...common, 'measures'].sort());
      expect(names('get', `${prefix}/metrics/timeseries`)).toEqual([...common, 'interval', 'measures'].sort());
      expect(names('get', `${prefix}/metrics/breakdown`)).toEqual([...common, 'dimension', 'limit', 'measures'].sort());
      expect(names('get', `${prefix}/metrics/events`)).toEqual([...common, 'cursor', 'limit', 'user_id'].sort());
    }
    expect(names('get', '/feedbacks')).toEqual(['category', 'includeMerged', 'limit', 'offset', 'sort', 'status']);
  });

  it('refuses, in these tests, a body with a field the document does not list', () => {
    const validator = responseValidator('get', '/feedbacks/{id}', 404);
    expect(validator({ error: true, reason: 'feedback not found' })).toBe(true);
    expect(validator({ error: true, reason: 'feedback not found', code: 'X' })).toBe(false);
    expect(validator({ error: { code: 'METRICS_INVALID_DATE', message: 'x' } })).toBe(false);
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
    expect(unknown.body).toEqual({ error: true, reason: expect.any(String) });
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

    await call('post', '/feedbacks/{id}/votes', 200, { apiKey, params: { id: feedbackId }, body: { userId: 'voter', notifyStatusChange: true } });
    await call('post', '/feedbacks/{id}/votes', 409, { apiKey, params: { id: feedbackId }, body: { userId: 'voter' } });
    await call('delete', '/feedbacks/{id}/votes', 200, { apiKey, params: { id: feedbackId }, body: { userId: 'voter' } });
    await call('post', '/feedbacks/{id}/votes', 400, { apiKey, params: { id: feedbackId }, body: {} });

    await call('post', '/feedbacks/{id}/comments', 200, { apiKey, params: { id: feedbackId }, body: { content: 'Yes please', userId: 'u3' } });
    await call('post', '/feedbacks/{id}/comments', 200, {
      apiKey,
      params: { id: feedbackId },
      body: { content: 'On it', userId: 'team', isAdmin: true },
    });
    await call('get', '/feedbacks/{id}/comments', 200, { apiKey, params: { id: feedbackId } });
    await call('get', '/feedbacks/{id}/comments', 404, { apiKey, params: { id: randomUUID() } });

    // A method the path does not have (not in the document, so called directly): the `default` response.
    const wrongMethod = await server.request('PUT', `/api/v1/feedbacks/${feedbackId}`, { apiKey, body: {} });
    expect(wrongMethod.status).toBe(404);
    expectConforms('get', '/feedbacks/{id}', wrongMethod, { allowDefault: true });
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
    await call('post', '/events/batch', 400, { apiKey, body: { events: [{ eventName: 'x' }] } });
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
    const free = await call('post', '/admin/accounts', 200, { bearer: server.operatorToken, body: { email: `m-${randomUUID()}@example.com` } });
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
    await call('patch', '/admin/projects/{id}', 200, { bearer: server.operatorToken, params: { id: projectId }, body: { suspended: true } });
    try {
      await call('get', '/feedbacks', 403, { apiKey });
      await call('get', '/metrics/summary', 403, { apiKey });
      await call('get', '/metrics/events', 403, { apiKey });
      await call('post', '/events/track', 403, { apiKey, body: { eventName: 'x', userId: 'u' } });
    } finally {
      await call('patch', '/admin/projects/{id}', 200, { bearer: server.operatorToken, params: { id: projectId }, body: { suspended: false } });
    }
    await call('patch', '/admin/projects/{id}', 404, { bearer: server.operatorToken, params: { id: randomUUID() }, body: { suspended: true } });
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
    await call('post', '/projects/{id}/integrations', 200, { bearer, params: { id }, body: { kind: 'webhook', url: 'http://127.0.0.1:9/hook' } });
    const created = await call('post', '/feedbacks', 200, {
      apiKey: project.body.api_key,
      body: { title: 'Notify me', description: 'x', category: 'other', userId: 'u1' },
    });
    let deliveries: any[] = [];
    for (let i = 0; i < 100; i++) {
      deliveries = (await call('get', '/projects/{id}/deliveries', 200, { bearer, params: { id } })).body;
      if (deliveries.length === 2 && deliveries.every((d) => d.status !== 'pending')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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
    await call('get', '/unsubscribe/{token}', 200, { params: { token: vote!.token } });
    await call('post', '/unsubscribe/{token}', 200, { params: { token: vote!.token } });
    await call('get', '/unsubscribe/{token}', 404, { params: { token: randomUUID() } });
  });

  it('team members and integrations', async () => {
    const team = await call('post', '/admin/accounts', 200, {
      bearer: server.operatorToken,
      body: { email: `team-${randomUUID()}@example.com`, plan: 'team' },
    });
    const bearer = team.body.admin_token as string;
    const project = await call('post', '/projects', 200, { bearer, body: { name: 'Team app' } });
    const id = project.body.id as string;

    const member = await call('post', '/projects/{id}/members', 200, { bearer, params: { id }, body: { email: `m-${randomUUID()}@example.com` } });
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
    await call('patch', '/projects/{id}/integrations/{integrationId}', 400, { bearer, params: { id, integrationId: slack.body.id }, body: {} });
    await call('patch', '/projects/{id}/integrations/{integrationId}', 404, {
      bearer,
      params: { id, integrationId: randomUUID() },
      body: { enabled: true },
    });
    await call('delete', '/projects/{id}/integrations/{integrationId}', 200, { bearer, params: { id, integrationId: slack.body.id } });
    await call('delete', '/projects/{id}/integrations/{integrationId}', 404, { bearer, params: { id, integrationId: slack.body.id } });
    await call('get', '/projects/{id}/integrations', 403, { bearer: adminToken, params: { id } });

    await call('patch', '/admin/accounts/{id}', 200, { bearer: server.operatorToken, params: { id: team.body.id }, body: { plan: 'free' } });
    await call('post', '/projects/{id}/integrations', 402, { bearer, params: { id }, body: { kind: 'slack', url: 'https://hooks.slack.com/x' } });
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
