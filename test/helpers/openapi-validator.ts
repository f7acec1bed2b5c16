import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';

/*
 * Every response a test receives through the HTTP helpers (server.ts request(), service.ts call())
 * is checked against the OpenAPI document (issue 7): the document's operation for the request's
 * method and concrete path, a response documented for the status (or the operation's `default`),
 * the Content-Type among that response's media types, and the body valid against its schema.
 *
 * The document is the one the service serves, built once per test process by the same function
 * (src/api/openapi/document.ts), not fetched over HTTP. Nothing here knows a route: paths are matched
 * against the document's templates, so routes added later are checked as soon as they are
 * documented, and refused until they are.
 *
 * Test-only strictness, as in test/api/openapi.test.ts: an object schema that lists properties and
 * says nothing about additionalProperties refuses undocumented fields here (the published
 * document leaves objects open, so that adding a field later does not break clients).
 */

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Document = OpenAPIV3.Document;
type Operation = OpenAPIV3.OperationObject;
type ResponseObject = OpenAPIV3.ResponseObject;
type Method = (typeof METHODS)[number];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** What the server answered, as a helper saw it. */
export type ObservedResponse = {
  method: string;
  /** The path as requested, with its query string if any (no scheme or host). */
  path: string;
  status: number;
  headers: Headers;
  /** The body as received, undecoded. */
  text: string;
};

/** A response the document does not allow: the message says which request, what and why. */
export class OpenApiViolation extends Error {
  override name = 'OpenApiViolation';
}

/**
 * A request the document has no operation for (an unknown path, or a method the path does not
 * have) is answered, per the document's own description, "404 in the server-wide body".
 */
const UNKNOWN_ROUTE = { statuses: ['404'], schema: '#/components/schemas/Error' } as const;

/** JSON Schema ids under which the document's components are registered with Ajv. */
const COMPONENTS_ID = 'https://openapi.test/components';
const REF_PREFIX = '#/components/schemas/';

type Template = {
  method: Method;
  template: string;
  regex: RegExp;
  literals: number;
  operation: Operation;
  pathItem: OpenAPIV3.PathItemObject;
};

/** An OpenAPI 3.0 response validator for one document. */
export class OpenApiValidator {
  private readonly ajv: Ajv;
  private readonly templates: Template[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    this.ajv = addFormats(new Ajv({ allErrors: true, strictSchema: true, strictTypes: false, strictTuples: false }));
    // Annotations of OpenAPI 3.0 schemas that are not JSON Schema keywords.
    this.ajv.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator']);
    const definitions: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) definitions[name] = toJsonSchema(schema);
    this.ajv.addSchema({ $id: COMPONENTS_ID, definitions });

    for (const [template, pathItem] of Object.entries(document.paths ?? {})) {
      if (!pathItem) continue;
      for (const method of METHODS) {
        const operation = pathItem[method];
        if (!operation) continue;
        for (const base of serverPaths(operation.servers ?? pathItem.servers ?? document.servers)) {
          const full = `${base}${template}`;
          this.templates.push({
            method,
            template: full,
            regex: templateRegex(full),
            literals: full.replace(/\{[^}]+\}/g, '').length,
            operation,
            pathItem,
          });
        }
      }
    }
  }

  /** The operation `method path` falls under, or undefined; the most literal template wins. */
  match(method: string, path: string): Template | undefined {
    const pathname = path.split('?')[0] ?? '';
    const wanted = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    return this.candidates(pathname)
      .filter((t) => t.method === wanted)
      .sort((a, b) => b.literals - a.literals)[0];
  }

  private candidates(pathname: string): Template[] {
    return this.templates.filter((t) => t.regex.test(pathname));
  }

  /** The problems of one response, as readable lines; empty when it conforms. */
  check(response: ObservedResponse): string[] {
    const method = response.method.toUpperCase();
    const pathname = response.path.split('?')[0] ?? '';
    const template = this.match(method, pathname);
    const status = String(response.status);

    let documented: ResponseObject | undefined;
    let where: string;
    if (template) {
      where = `${method} ${template.template}`;
      documented = lookupStatus(template.operation.responses, status);
      if (!documented) {
        const listed = Object.keys(template.operation.responses).join(', ');
        return [`${where} does not document status ${status} (documented: ${listed})`];
      }
    } else {
      // A method the path does not have is described by the `default` of the path's operations.
      const sibling = this.candidates(pathname)
        .sort((a, b) => b.literals - a.literals)
        .find((t) => t.operation.responses.default);
      if (sibling) {
        where = `${method} ${sibling.template} (no such operation; ${sibling.method.toUpperCase()}'s default response)`;
        documented = this.resolveResponse(sibling.operation.responses.default);
      } else {
        where = `${method} ${pathname} (no operation in the document)`;
        if (!(UNKNOWN_ROUTE.statuses as readonly string[]).includes(status)) {
          return [`${where}: an unknown route must answer ${UNKNOWN_ROUTE.statuses.join(' or ')}, not ${status}`];
        }
        documented = { description: 'unknown route', content: { 'application/json': { schema: { $ref: UNKNOWN_ROUTE.schema } } } };
      }
    }
    documented = this.resolveResponse(documented);
    if (!documented) return [`${where}: the response object for ${status} could not be resolved`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const required = (header as OpenAPIV3.HeaderObject).required === true;
      if (required && !response.headers.has(name)) problems.push(`${where} ${status}: required header ${name} is missing`);
    }

    const content = documented.content;
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (method === 'HEAD') return problems;
    if (!content || Object.keys(content).length === 0) {
      if (response.text !== '') problems.push(`${where} ${status}: the document gives no body, the server sent ${mediaType || 'one'}`);
      return problems;
    }
    const key = Object.keys(content).find((documentedType) => mediaTypeMatches(documentedType, mediaType));
    if (key === undefined) {
      problems.push(
        `${where} ${status}: Content-Type ${mediaType || '(none)'} is not documented (documented: ${Object.keys(content).join(', ')})`,
      );
      return problems;
    }
    const schema = content[key]?.schema;
    if (!schema) return problems;

    let body: unknown = response.text;
    if (/[/+]json$/.test(key)) {
      try {
        body = JSON.parse(response.text);
      } catch {
        problems.push(`${where} ${status}: the body is not JSON, though ${mediaType} was documented`);
        return problems;
      }
    }
    const validate = this.validatorFor(`${where} ${status} ${key}`, schema);
    if (!validate(body)) problems.push(`${where} ${status} ${key}: the body does not match its schema: ${describeErrors(validate.errors)}`);
    return problems;
  }

  /** Throws an OpenApiViolation naming the request, status, body excerpt and problems. */
  assert(response: ObservedResponse): void {
    const problems = this.check(response);
    if (problems.length === 0) return;
    throw new OpenApiViolation(
      [
        `The response to ${response.method.toUpperCase()} ${response.path} (status ${response.status}) violates the OpenAPI document:`,
        ...problems.map((problem) => `  - ${problem}`),
        `  body: ${excerpt(response.text)}`,
        '  (fix src/api/<resource>/<resource>.routes.ts or .responses.ts, or the server; see README "OpenAPI" to opt a request out)',
      ].join('\n'),
    );
  }

  private resolveResponse(response: OpenAPIV3.ReferenceObject | ResponseObject | undefined): ResponseObject | undefined {
    if (!response || !('$ref' in response)) return response;
    const name = response.$ref.replace('#/components/responses/', '');
    return this.resolveResponse(this.document.components?.responses?.[name]);
  }

  private validatorFor(key: string, schema: OpenAPIV3.SchemaObject | OpenAPIV3.ReferenceObject): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

/** The documented response for a status: exact, then its range (`4XX`), then `default`. */
function lookupStatus(responses: OpenAPIV3.ResponsesObject, status: string) {
  return (responses[status] ?? responses[`${status[0]}XX`] ?? responses.default) as ResponseObject | undefined;
}

function mediaTypeMatches(documented: string, actual: string): boolean {
  const [type, subtype] = documented.toLowerCase().split(';')[0]?.trim().split('/') ?? [];
  const [actualType, actualSubtype] = actual.split('/');
  return (type === '*' || type === actualType) && (subtype === '*' || subtype === actualSubtype);
}

/** The path part of each server URL (`/api/v1`, `/`), without a trailing slash. */
function serverPaths(servers: OpenAPIV3.ServerObject[] | undefined): string[] {
  const urls = servers?.length ? servers.map((server) => server.url) : ['/'];
  return urls.map((url) => new URL(url, 'http://host').pathname.replace(/\/$/, ''));
}

/** `/api/v1/feedbacks/{id}` → a regex for concrete paths; a parameter is one non-empty segment. */
function templateRegex(template: string): RegExp {
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  // Koa's router is not strict about a trailing slash.
  return new RegExp(`^${source}/?$`);
}

/**
 * An OpenAPI 3.0 schema as JSON Schema (draft-07, what Ajv reads):
 * - `nullable: true` adds null to what the schema allows: `anyOf: [schema, { type: 'null' }]`,
 *   which is right for every schema, enums and `$ref`s included (3.0 ignores `$ref` siblings, so
 *   the generator wraps those in `allOf`/`anyOf` first);
 * - 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` become draft-07's numbers;
 * - `$ref`s to components point at the schema registered under COMPONENTS_ID;
 * - objects with properties and no additionalProperties refuse other fields (see above), except
 *   branches of an allOf, which must each allow the others' fields.
 */
export function toJsonSchema(schema: unknown, inAllOf = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => toJsonSchema(item, inAllOf));
  if (schema === null || typeof schema !== 'object') return schema;
  const node = schema as Record<string, unknown>;
  if (typeof node.$ref === 'string') {
    if (!node.$ref.startsWith(REF_PREFIX)) throw new Error(`unsupported $ref ${node.$ref}`);
    return { $ref: `${COMPONENTS_ID}#/definitions/${node.$ref.slice(REF_PREFIX.length)}` };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case 'nullable':
        break;
      case 'properties':
        out.properties = Object.fromEntries(Object.entries(value as object).map(([name, child]) => [name, toJsonSchema(child)]));
        break;
      case 'items':
      case 'not':
        out[key] = toJsonSchema(value);
        break;
      case 'additionalProperties':
        out[key] = typeof value === 'object' ? toJsonSchema(value) : value;
        break;
      case 'anyOf':
      case 'oneOf':
        out[key] = (value as unknown[]).map((branch) => toJsonSchema(branch));
        break;
      case 'allOf':
        out[key] = (value as unknown[]).map((branch) => toJsonSchema(branch, true));
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum': {
        const bound = key === 'exclusiveMinimum' ? 'minimum' : 'maximum';
        if (value === true) out[key] = node[bound];
        else if (typeof value === 'number') out[key] = value;
        break;
      }
      case 'minimum':
      case 'maximum':
        if (node[key === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] !== true) out[key] = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (!inAllOf && out.type === 'object' && out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return node.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .slice(0, 10)
    .map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
    .join('; ');
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 600 ? `${flat.slice(0, 600)}… (${text.length} characters)` : flat || '(empty)';
}

let shared: OpenApiValidator | undefined;

/** The validator of the service's own document, built on first use and kept for the process. */
export function openApiValidator(): OpenApiValidator {
  shared ??= new OpenApiValidator(buildOpenApiDocument() as unknown as Document);
  return shared;
}

const unreported: string[] = [];

/**
 * Checks a response a test helper received; throws the violation (failing the request, hence the
 * test) and also keeps it, so that a test that swallows errors of its requests (a sender loop that
 * counts failures as outcomes) still fails in afterEach (test/helpers/openapi-setup.ts).
 */
export function assertDocumented(response: ObservedResponse): void {
  try {
    openApiValidator().assert(response);
  } catch (error) {
    if (error instanceof OpenApiViolation) unreported.push(error.message);
    throw error;
  }
}

/** Violations seen since the last call (for the afterEach safety net). */
export function takeViolations(): string[] {
  return unreported.splice(0, unreported.length);
}
