import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { API_PREFIX } from '../api-prefix.js';
import { ErrorBody } from './errors.responses.js';

/*
 * What every route's OpenAPI description is made of: response and request-body helpers, the
 * credentials, the servers, the common path parameters and the `route` wrapper that adds the rate
 * limiter's 429. Each route's declaration (defineRoute, <resource>.routes.ts) is made of these;
 * document.ts assembles them.
 */

/** A response with a JSON body of this schema. */
export const json = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema } } });
/** A refusal in the server-wide error body (SPEC 7.1). */
export const error = (description: string) => json(description, ErrorBody);

/** The `default` response of every operation. */
export const defaultError = error(
  'Any other failure, in the server-wide error body: 400 on every route for a path parameter, query or body string a store cannot hold ' +
    '(a lone UTF-16 surrogate or NUL, keys included; the reason names the field, or `path`), 405 with `Allow` for a method this path does not have, 413 for ' +
    'a body over the limit (JSON 1 MiB, batches 5 MiB, counted decompressed; the reason states it in bytes), 415 for an unknown `Content-Encoding` (gzip, deflate and br are read), 500, and 503 with `Retry-After` while the service shuts down. ' +
    'Refused before routing, with the connection closed: 431 when the request line (a long URL counts) and headers ' +
    'exceed 16 KiB, 408 when the headers or body arrive too slowly, 400 for malformed HTTP.',
);

/**
 * The schema that validates each documentation copy made by withFieldDocs: body() validates with
 * it, so the copy (whose descriptions the document shows) never validates anything.
 */
const validatorOfCopy = new WeakMap<z.ZodType, z.ZodType>();

/**
 * A request body schema with descriptions added to some fields, for the document. bodySchema()
 * wraps the object in a z.preprocess; the description is built from that object's own shape, so
 * every constraint stays the validating schema's, and body() validates with the schema given here.
 * A description of a field the schema does not have is an error.
 */
export function withFieldDocs<S extends z.ZodType>(schema: S, docs: Partial<Record<keyof ShapeOf<S>, string>>): z.ZodType<z.output<S>> {
  const object = schema instanceof z.ZodPipe ? schema.out : schema;
  if (!(object instanceof z.ZodObject)) throw new Error('withFieldDocs: not an object schema');
  const shape = object.shape as Record<string, z.ZodType>;
  const described: Record<string, z.ZodType> = {};
  for (const [field, description] of Object.entries(docs) as [string, string][]) {
    const fieldSchema = shape[field];
    if (!fieldSchema) throw new Error(`withFieldDocs: the schema has no field ${field}`);
    described[field] = fieldSchema.meta({ description });
  }
  const copy = object.extend(described);
  validatorOfCopy.set(copy, validatorOfCopy.get(schema) ?? schema);
  return copy as unknown as z.ZodType<z.output<S>>;
}

/** The shape of an object schema, or of the object inside bodySchema()'s z.preprocess. */
type ShapeOf<S> = S extends z.ZodPipe<infer _In, infer O> ? ShapeOf<O> : S extends z.ZodObject<infer Shape> ? Shape : never;

declare const parsedAs: unique symbol;

/** A route's request body as the document describes it; `T` is what its validating schema outputs. */
export type RequestBody<T> = {
  description: string;
  required: boolean;
  content: { 'application/json': { schema: z.ZodType } };
  readonly [parsedAs]?: T;
};

/** How a route reads a body: the schema that validates it, and whether it may be left out. */
export type BodyValidator = { schema: z.ZodType; optional: boolean };

/** The validator of each body() and optionalBody(), by the object they returned. */
const validatorOfBody = new WeakMap<object, BodyValidator>();

/** How a route validates its body() (define-route.ts). */
export function bodyValidator(requestBody: RequestBody<unknown>): BodyValidator | undefined {
  return validatorOfBody.get(requestBody);
}

/** A body() whose description says something else than body()'s (a route's own casing example, say). */
export function reworded<T>(requestBody: RequestBody<T>, description: string): RequestBody<T> {
  const validator = validatorOfBody.get(requestBody);
  if (!validator) throw new Error('reworded: not a body()');
  const copy: RequestBody<T> = { ...requestBody, description };
  validatorOfBody.set(copy, validator);
  return copy;
}

/**
 * A body the client may leave out (required: false): none, JSON null or `{}` reach the handler as
 * undefined; any other body is validated as body()'s. `description` replaces body()'s when given.
 */
export function optionalBody<T>(requestBody: RequestBody<T>, description?: string): RequestBody<T | undefined> {
  const validator = validatorOfBody.get(requestBody);
  if (!validator) throw new Error('optionalBody: not a body()');
  const optional: RequestBody<T | undefined> = { ...requestBody, required: false, description: description ?? requestBody.description };
  validatorOfBody.set(optional, { schema: validator.schema, optional: true });
  return optional;
}

/**
 * Request bodies: the schemas that validate them, named as components, described in camelCase.
 * The route validates the body with the schema given (or the one withFieldDocs copied).
 */
export function body<S extends z.ZodType>(schema: S, name: string, description = ''): RequestBody<z.output<S>> {
  const requestBody: RequestBody<z.output<S>> = {
    description:
      `${description}${description ? ' ' : ''}Field names are given in camelCase; the snake_case spelling of each top-level field ` +
      '(`user_id` for `userId`) is accepted too. When both are sent, the camelCase one wins.',
    required: true,
    content: { 'application/json': { schema: schema.meta({ id: name }) } },
  };
  validatorOfBody.set(requestBody, { schema: validatorOfCopy.get(schema) ?? schema, optional: false });
  return requestBody;
}

/** A parameter's description, given once (on the parameter, not repeated on its schema). */
export const describe = <S extends z.ZodType>(schema: S, description: string, extra: Record<string, unknown> = {}): S =>
  schema.meta({ param: { description, ...extra } });

/** Security requirements: the operation's credential, or none. */
export const API_KEY = [{ ApiKeyAuth: [] }];
export const ADMIN_TOKEN = [{ AdminToken: [] }];
export const OPERATOR_TOKEN = [{ OperatorToken: [] }];
export const PUBLIC: RouteConfig['security'] = [];

/** Paths outside the /api/v1 prefix: health, the document itself and the docs page. */
export const ROOT_SERVER = [{ url: '/', description: 'The service root, outside the /api/v1 prefix' }];
export const API_SERVER = { url: API_PREFIX, description: 'This service (relative to the host that serves this document)' };

export const feedbackId = describe(z.uuid({ error: 'feedback not found' }), 'Feedback id. A malformed id is a 404, like a missing one.');
export const projectId = describe(
  z.uuid({ error: 'project not found' }),
  'Project id. 404 when no such project exists, 403 when it belongs to another account.',
);

export const ProjectPath = z.object({ id: projectId });

/** The refusal of a project of another account, or of a suspended one, on the admin token's routes. */
export const projectRefused = error('The project belongs to another account, or is suspended.');

/**
 * The responses every `projectAdmin` route shares (define-route.ts), for the statuses it states
 * none of its own: the token, the project's owner, the project itself.
 */
export function projectResponses(rules: { allowSuspended?: true } = {}) {
  return {
    401: error('Missing or invalid admin token.'),
    403: rules.allowSuspended ? error('The project belongs to another account.') : projectRefused,
    404: error('No such project.'),
  };
}

/** The rate limiter's refusal: on every route of the API (health and docs are not limited). */
const tooManyRequests = {
  ...error(
    'Rate limit exceeded: the budget of the API key or token (ingestion and other routes apart), or of the client IP ' +
      'after failed authentications. Limited responses of every status carry the RateLimit-* headers.',
  ),
  headers: {
    'Retry-After': { description: 'Seconds until the budget allows a request again.', schema: { type: 'integer' as const } },
    'RateLimit-Limit': { description: 'Requests the budget allows per window.', schema: { type: 'integer' as const } },
    'RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' as const } },
    'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' as const } },
  },
};

const UNLIMITED_PATHS = new Set(['/healthz', '/readyz', '/docs']);

/** Registers one operation in the document. */
export type Route = (config: RouteConfig) => void;

/**
 * The query check (middleware/storable-input.ts) runs before every router, health and docs
 * included. Operations with no 4XX of their own list it, so that clients and code generators see
 * at least one refusal (Redocly's operation-4xx-response).
 */
const unstorableQuery = error('A query string a store cannot hold (a lone UTF-16 surrogate or NUL); the reason names the parameter.');

/**
 * The `route` each resource registers its paths with: it adds the 429 to every rate-limited route,
 * and the query check's 400 to an operation that documents no 4XX.
 */
export function routeRegistrar(registry: OpenAPIRegistry): Route {
  return (config) => {
    let responses = config.responses;
    if (!Object.keys(responses).some((status) => status.startsWith('4'))) responses = { ...responses, 400: unstorableQuery };
    if (!UNLIMITED_PATHS.has(config.path) && !config.path.startsWith('/openapi')) responses = { ...responses, 429: tooManyRequests };
    registry.registerPath({ ...config, responses });
  };
}

/** The three credentials, referred to by API_KEY, ADMIN_TOKEN and OPERATOR_TOKEN. */
export function registerSecuritySchemes(registry: OpenAPIRegistry) {
  registry.registerComponent('securitySchemes', 'ApiKeyAuth', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'Project API key (`fbk_…`), for the client app. 401 when missing or unknown, 403 when the project is suspended.',
  });
  registry.registerComponent('securitySchemes', 'AdminToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fba_…',
    description:
      'Account admin token, for the project owner or a team member (both act as the account): `/projects…` and `/account`. 401 when missing or unknown, and for a team member’s token while the plan is not Team; 403 for a project of another account.',
  });
  registry.registerComponent('securitySchemes', 'OperatorToken', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'fbo_…',
    description: 'Operator token (`OPERATOR_TOKEN`), for whoever runs the service: `/admin/…`.',
  });
}

/** `limit` (1 to 500, default 50) and `offset` (default 0) of a list read from the query string. */
export const pageQueryFields = {
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(500, 'must be at most 500')
    .default(50),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').default(0),
};
