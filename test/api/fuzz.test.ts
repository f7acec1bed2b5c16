import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import type { OpenAPIV3 } from 'openapi-types';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createHttpServer } from '../../src/api/http-server.js';
import { createAccount, createFeedback, createProject, type TestAccount, type TestProject } from '../helpers/factories.js';
import {
  bodyOf,
  camelToSnake,
  document,
  fieldValue,
  hostileFilterText,
  hostileMeasureText,
  hostileString,
  RawBody,
  resolve,
  type Schema,
  surrogateOrNul,
} from '../helpers/fuzz-values.js';
import { cases } from '../helpers/generated-cases.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { requestTo, useTestServer } from '../helpers/server.js';

/*
 * Property-based: no input gets a 5xx (DESIGN 4). Every operation of the OpenAPI document that
 * takes a JSON body or query parameters is called with generated requests, built from the
 * document itself (so an operation added later is fuzzed as soon as it is documented): values
 * the schema allows mixed with hostile ones (unicode, very long, numbers as strings, nested
 * objects, arrays, nulls, unknown and differently cased keys, bodies that are not objects or not
 * JSON). For every answer:
 * - never a 5xx, and the response is the document's (the helpers check every response);
 * - a 4xx has the SPEC body: `{ error: true, reason }`, or `{ error: { code, message } }` for the
 *   metrics API's own 400s and 402 (SPEC 7), and the insights routes' (docs/insights.md);
 * - a refused request stored nothing: every PostgreSQL table of the server's database, and the
 *   project's events in ClickHouse after an ingestion route, are as they were before it.
 * Lone surrogates and NUL characters have properties of their own, so their findings are told
 * apart from the rest.
 *
 * Bounded for CI: RUNS cases per operation (CASES_SCALE scales them, FUZZ_RUNS sets them), the
 * whole file about a minute on a quiet 2-core machine (it was 161 s at 200 cases). The workers are off, so the outbox keeps every fact and nothing is delivered anywhere.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? cases(50));
const SURROGATE_RUNS = Math.max(10, Math.round(RUNS / 5));
/** One operation's property; the slowest (metrics through ClickHouse) take a few seconds. */
const PROPERTY_TIMEOUT_MS = 60_000;

type Credential = 'key' | 'admin' | 'operator';
type FuzzedOperation = {
  method: string;
  path: string;
  credential: Credential;
  query: OpenAPIV3.ParameterObject[];
  body: Schema | undefined;
  /** It calls an outside system (a tracker at the request's own api_url) and documents 502 for one that does not answer. */
  upstream: boolean;
};
type GeneratedRequest = { path: string; rawBody?: string };

/** Every operation with a JSON body or query parameters, and the credential it takes. */
function fuzzedOperations(): FuzzedOperation[] {
  const operations: FuzzedOperation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item ?? {}) as [string, OpenAPIV3.OperationObject][]) {
      const query = (operation.parameters ?? []).map((p) => resolve<OpenAPIV3.ParameterObject>(p)).filter((p) => p.in === 'query');
      const body = operation.requestBody && resolve<OpenAPIV3.RequestBodyObject>(operation.requestBody).content['application/json']?.schema;
      if (query.length === 0 && !body) continue;
      const scheme = Object.keys(operation.security?.[0] ?? {})[0];
      const credential: Credential = scheme === 'ApiKeyAuth' ? 'key' : scheme === 'OperatorToken' ? 'operator' : 'admin';
      operations.push({
        method: method.toUpperCase(),
        path,
        credential,
        query,
        body: body ? resolve<Schema>(body) : undefined,
        upstream: '502' in (operation.responses ?? {}),
      });
    }
  }
  return operations;
}

/** A parameter's value from its schema; `filters` and `measures` also from the filter language's hostile corpus. */
function parameterValue(parameter: OpenAPIV3.ParameterObject, ids: string[], strings: fc.Arbitrary<string>, hostileWeight: number) {
  const fromSchema = fieldValue(resolve<Schema>(parameter.schema ?? {}), ids, strings, hostileWeight);
  if (parameter.name === 'filters') return fc.oneof(fromSchema, { weight: 3, arbitrary: hostileFilterText });
  if (parameter.name === 'measures') return fc.oneof({ weight: 2, arbitrary: fromSchema }, hostileMeasureText);
  return fromSchema;
}

/** A query string: each documented parameter absent, plausible, hostile, in its other casing, or repeated. */
function queryOf(
  parameters: OpenAPIV3.ParameterObject[],
  ids: string[],
  strings: fc.Arbitrary<string>,
  hostileWeight: number,
): fc.Arbitrary<string> {
  // A generated value may be an object without a prototype, which String() cannot convert.
  const itemText = (item: unknown) => (typeof item === 'object' && item !== null ? JSON.stringify(item) : String(item));
  const asText = (value: unknown) =>
    Array.isArray(value) ? value.map(itemText).join(',') : typeof value === 'string' ? value : JSON.stringify(value);
  const one = (parameter: OpenAPIV3.ParameterObject) =>
    fc.record({
      mode: fc.constantFrom('absent', 'absent', 'given', 'given', 'other-casing', 'repeated'),
      value: parameterValue(parameter, ids, strings, hostileWeight),
      second: fieldValue(resolve<Schema>(parameter.schema ?? {}), ids, strings, hostileWeight),
    });
  return fc.tuple(fc.tuple(...parameters.map(one)), fc.dictionary(strings, strings, { maxKeys: 2 })).map(([choices, extra]) => {
    const search = new URLSearchParams();
    choices.forEach((choice, i) => {
      const name = (parameters[i] as OpenAPIV3.ParameterObject).name;
      const other = name.includes('_') ? name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : camelToSnake(name);
      if (choice.mode === 'absent') return;
      if (Array.isArray(choice.value) && choice.mode === 'repeated') {
        for (const item of choice.value) search.append(name, itemText(item));
        return;
      }
      search.append(choice.mode === 'other-casing' ? other : name, asText(choice.value));
      if (choice.mode === 'repeated') search.append(name, asText(choice.second));
    });
    for (const [name, value] of Object.entries(extra)) search.append(name, value);
    const text = search.toString();
    return text ? `?${text}` : '';
  });
}

// ---------------------------------------------------------------------------------------------
// The server, its fixtures, and what "nothing stored" compares

const server = useTestServer({ workers: false });
/** The app behind the production HTTP server (its answers to oversized URLs and headers). */
let http: Server;
let base = '';
let account: TestAccount;
let project: TestProject;
/** PATCH /projects/{id} and /admin/projects/{id} may archive or suspend: never the main project. */
let expendable: TestProject;
/** PATCH /admin/accounts/{id} may change the plan: never the main account. */
let otherAccount: TestAccount;
const feedbackIds: string[] = [];
let tables: string[] = [];

beforeAll(async () => {
  http = createHttpServer(buildApp({ ...server.services, operatorToken: server.operatorToken }), server.services.config.http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  account = await createAccount(server, 'team');
  project = await createProject(server, { account });
  expendable = await createProject(server, { account });
  otherAccount = await createAccount(server, 'pro');
  for (let i = 0; i < 3; i++) feedbackIds.push((await createFeedback(server, project, { title: `fixture ${i}` })).id);
  tables = (
    await server.sql<{ name: string }[]>`
      select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE'
      order by table_name`
  ).map((row) => row.name);
  stopWhenDone(async () => {
    http?.closeAllConnections();
    await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  });
});

/** Every row of every table, as one digest per table (the database is this server's own). */
async function postgresState(): Promise<Record<string, string>> {
  const { sql } = server;
  const parts = tables.map(
    (table) =>
      sql`select ${table}::text as name, count(*)::text || ':' || md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${sql(table)} t`,
  );
  const query = parts.slice(1).reduce((all, part) => sql`${all} union all ${part}`, parts[0]!);
  const rows = await sql<{ name: string; digest: string }[]>`${query}`;
  return Object.fromEntries(rows.map((row) => [row.name, row.digest]));
}

async function projectEvents(): Promise<number> {
  const [row] = await server.clickhouseRows<{ n: string }>('SELECT count() AS n FROM events WHERE project_id = {p:UUID}', {
    p: project.id,
  });
  return Number(row?.n ?? 0);
}

function concretePath(operation: FuzzedOperation): string {
  const id = operation.path.startsWith('/admin/accounts/')
    ? otherAccount.id
    : operation.path === '/projects/{id}' || operation.path === '/admin/projects/{id}'
      ? expendable.id
      : project.id;
  return operation.path
    .replace('{id}', operation.path.startsWith('/feedbacks/') ? (feedbackIds[0] as string) : id)
    .replace('{feedbackId}', feedbackIds[1] as string)
    .replace(/\{[A-Za-z]+Id\}/g, '00000000-0000-4000-8000-000000000000');
}

const credentialOf = (credential: Credential) =>
  credential === 'key'
    ? { apiKey: project.apiKey }
    : credential === 'admin'
      ? { bearer: account.adminToken }
      : { bearer: server.operatorToken };

const ids = () => [...feedbackIds, project.id, expendable.id, account.id, otherAccount.id];

function requestsFor(operation: FuzzedOperation, strings: fc.Arbitrary<string>, hostileWeight: number): fc.Arbitrary<GeneratedRequest> {
  const path = `/api/v1${concretePath(operation)}`;
  const query = operation.query.length > 0 ? queryOf(operation.query, ids(), strings, hostileWeight) : fc.constant('');
  const body = operation.body ? bodyOf(operation.body, ids(), strings, hostileWeight) : fc.constant(undefined);
  return fc.tuple(query, body).map(([q, b]): GeneratedRequest => {
    if (!operation.body) return { path: path + q };
    // JSON.stringify keeps a lone surrogate as the escape \ud800: valid JSON the server decodes to it.
    return { path: path + q, rawBody: b instanceof RawBody ? b.text : (JSON.stringify(b) ?? 'null') };
  });
}

/** Sends one generated request and checks the three promises of the header comment. */
/**
 * PostgreSQL as the last refused request left it (checked unchanged then), so the next request
 * need not read it again; unknown after any other answer, which may have written.
 */
let settledPostgres: Record<string, string> | undefined;

async function check(operation: FuzzedOperation, request: GeneratedRequest): Promise<void> {
  const ingestion = operation.path.startsWith('/events/');
  const before = settledPostgres ?? (await postgresState());
  settledPostgres = undefined;
  const eventsBefore = ingestion ? await projectEvents() : 0;
  const response = await requestTo(base, operation.method, request.path, {
    ...credentialOf(operation.credential),
    ...(request.rawBody !== undefined ? { rawBody: request.rawBody } : {}),
  });
  const what = `${operation.method} ${request.path.slice(0, 300)} -> ${response.status} ${JSON.stringify(response.body)?.slice(0, 300)}`;
  // A tracker that does not answer (here: a generated api_url no one serves) is the upstream's
  // failure, which such a route documents as 502; any other 5xx is ours.
  if (!(operation.upstream && response.status === 502)) expect(response.status, what).toBeLessThan(500);
  if (response.status < 400) return;

  // The insights routes and the user timeline answer their 400s and 402s in the metrics error body too (docs/insights.md, docs/sessions.md).
  const metricsBodied = /\/(metrics|insights)\/|\/event-names$|\/impact$|\/event-properties$|\/timeline$/.test(operation.path);
  const metricsOwn = metricsBodied && (response.status === 400 || response.status === 402);
  // A body no route can read (not JSON, unstorable strings) is refused before routing, in the
  // server-wide body, on the insights routes as anywhere (their bodies are JSON; metrics take none).
  if (metricsOwn && (typeof response.body?.error === 'object' || operation.path.includes('/metrics/'))) {
    expect(response.body, what).toEqual({ error: { code: expect.stringMatching(/^METRICS_[A-Z_]+$/), message: expect.any(String) } });
  } else if (metricsOwn && !operation.path.includes('/metrics/')) {
    expect(response.body, what).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  } else if (operation.path.includes('/metrics/') && response.status === 403 && typeof response.body?.error === 'object') {
    expect(response.body.error.code, what).toBe('METRICS_MEASURE_REQUIRES_ADMIN_TOKEN');
  } else {
    expect(response.body, what).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
  }
  const after = await postgresState();
  expect(after, `${what}: a refused request changed PostgreSQL`).toEqual(before);
  settledPostgres = after;
  if (ingestion) expect(await projectEvents(), `${what}: a refused request stored events`).toBe(eventsBefore);
}

const operations = fuzzedOperations();

describe('no 5xx, the SPEC error body, nothing stored: generated requests on every operation with a body or query', () => {
  it('covers every JSON body and every query parameter of the document', () => {
    expect(operations.filter((o) => o.body).length).toBeGreaterThanOrEqual(18);
    expect(operations.flatMap((o) => o.query.map((p) => p.name))).toEqual(
      expect.arrayContaining(['includeMerged', 'measures', 'date_from', 'cursor']),
    );
  });

  for (const operation of operations) {
    it(
      `${operation.method} ${operation.path}`,
      async () => {
        await fc.assert(
          fc.asyncProperty(requestsFor(operation, hostileString, 2), (request) => check(operation, request)),
          { numRuns: RUNS },
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
});

describe('lone surrogates and NUL anywhere: a 4xx, never a 5xx', () => {
  for (const operation of operations) {
    it(
      `${operation.method} ${operation.path}`,
      async () => {
        await fc.assert(
          fc.asyncProperty(requestsFor(operation, surrogateOrNul, 6), (request) => check(operation, request)),
          { numRuns: SURROGATE_RUNS },
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  }
});
