import { OpenAPIRegistry, OpenApiGeneratorV3 } from '@asteasolutions/zod-to-openapi';
import { stringify } from 'yaml';
import { registerCorsPaths } from '../cors/cors.openapi.js';
import { registerEndpointPreflight } from '../cors/endpoint-cors.js';
import { registerRoutes } from '../define-route.js';
import { ROUTES } from '../routes.js';
import { API_SERVER, registerSecuritySchemes, routeRegistrar } from '../shared/building-blocks.js';

/*
 * The OpenAPI 3.0 description of the API (SPEC 9), generated from the zod schemas themselves: the
 * request schemas that validate bodies and queries (*.schema.ts, imported as they are) and the
 * response schemas (*.responses.ts), so a changed constraint or field shows up here. Each route
 * is described in its own declaration (<resource>/<resource>.routes.ts, made of building-blocks.ts),
 * the one the app registers; this file reads the route list (routes.ts) and adds the CORS preflights.
 *
 * Generator: @asteasolutions/zod-to-openapi 9 (peer zod ^4, no Node engine constraint, one
 * dependency: openapi3-ts). zod 4's own `z.toJSONSchema({ target: 'openapi-3.0' })` converts one
 * schema at a time; everything around it (paths, parameters out of a query object, request
 * bodies, responses, components and $refs, security) would be hand-written here. The library
 * builds all of that, has a dedicated 3.0 generator (`nullable`, not 3.1 type arrays), and reads
 * the schemas the way the API uses them: for bodySchema()'s `z.preprocess` it describes the object
 * the body is validated against (camelCase keys), and for a transform (`includeMerged`, `eventId`)
 * the input the client sends. Schemas are named with zod's own `.meta({ id })`, so zod is not
 * patched (no `extendZodWithOpenApi`).
 *
 * What keeps it from drifting: routes are checked against Koa's router stacks, and real responses
 * against these schemas, by test/api/openapi.test.ts; response schemas are checked against the
 * presenters' types at compile time (the checks at the end of each *.responses.ts).
 */

export const OPENAPI_VERSION = '3.0.3';
export const API_VERSION = '1.0.0';

/** Every route, in the routing order (paths are listed in the order registered), then the CORS preflights. */
function register(registry: OpenAPIRegistry) {
  registerSecuritySchemes(registry);
  registerRoutes(routeRegistrar(registry), ROUTES);
  registerCorsPaths(registry, ROUTES);
  registerEndpointPreflight(registry);
}

const DESCRIPTION = `
Multi-project feedback and product-analytics service: client apps submit feedback, vote and
comment, register their users and track analytics events; project owners manage feedback and
read metrics.

**Field names.** Response bodies use snake_case, exactly as the schemas below. Request bodies
accept camelCase or snake_case: the schemas give the camelCase spelling, and \`user_id\` is read as
\`userId\` (when both are sent, the camelCase one wins). Query parameters are read as documented
(\`includeMerged\`, \`date_from\`), and their other casing is accepted as an alias (\`include_merged\`,
\`dateFrom\`), for SDKs that rename parameters; both spellings with different values are a 400
naming the parameter (\`METRICS_INVALID_PARAMETER\` on metrics), with equal values one parameter.
A parameter may be given once; an array parameter (\`measures\`) repeated or as a comma list.

**Timestamps.** Every timestamp in an answer, a notification or a webhook is RFC 3339 in whole
seconds, UTC with \`Z\` (\`2026-11-25T16:08:31Z\`), as the origin service sent them: its Swift SDK
decodes no fraction. The stores keep finer times, and orders that need them (the events feed,
its opaque cursor) use those. Data exports keep the stored precision.

**Repeated headers.** \`X-User-Id\` sent more than once counts once when the values are equal;
differing values are a 400.

**Credentials.** Project API key in \`X-API-Key\` (the client app's operations), the account's
admin token, the owner's or a team member's, as \`Authorization: Bearer\` (\`/projects…\`, \`/account\`), the operator token as
\`Authorization: Bearer\` (\`/admin/…\`).

**Errors.** Two bodies: the server-wide \`{ "error": true, "reason": "…" }\` (authentication,
authorization, validation of the non-metrics operations, 404, 409, 413, 500, 503) and the metrics
API's \`{ "error": { "code": "METRICS_…", "message": "…" } }\` (its 400s, 402 and the admin-only
measure 403). Clients tell them apart by the type of \`error\`. Unknown routes are 404 in the
server-wide body.

**Browsers.** The client app's routes (feedback, votes, comments, \`/users/register\`,
\`/events/track\`, \`/events/batch\`) answer CORS preflights for any origin and allow no credentials
(the API key is the credential); a project may restrict its key to listed origins
(\`allowed_origins\`). Owner and operator routes send no CORS headers.

**Back-off.** 429 and 503 carry \`Retry-After\` (seconds); a 413 states the limit in bytes.

Every response carries \`X-Request-Id\` (the caller's, when it sent a sane one) and
\`X-Content-Type-Options: nosniff\`.
`.trim();

/** Builds the document. Pure: the same every time, so callers may cache it. */
export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  register(registry);
  const document = new OpenApiGeneratorV3(registry.definitions, { sortComponents: 'alphabetically' }).generateDocument({
    openapi: OPENAPI_VERSION,
    info: { title: 'Feedback service API', version: API_VERSION, description: DESCRIPTION },
    servers: [API_SERVER],
    tags: [
      { name: 'Feedback', description: 'Feedback items (X-API-Key)' },
      { name: 'Votes', description: 'Votes on feedback (X-API-Key)' },
      { name: 'Comments', description: 'Comments on feedback (X-API-Key)' },
      { name: 'SDK users', description: 'Users of the client app (X-API-Key)' },
      { name: 'Events', description: 'Analytics event ingestion (X-API-Key)' },
      { name: 'Metrics', description: 'Metrics on two surfaces: X-API-Key, or the admin token with the SDK-user and revenue measures' },
      { name: 'Projects', description: 'Projects of the admin token’s account' },
      {
        name: 'ClickHouse interface',
        description: 'Credentials of the read-only ClickHouse HTTP interface of a project (docs/clickhouse-interface.md)',
      },
      { name: 'Team members', description: 'Team members of a project and their admin tokens (Team plan)' },
      { name: 'Integrations', description: 'Slack, Discord and signed webhook integrations of a project (Pro and Team plans)' },
      { name: 'Notifications', description: 'Delivery of notifications (emails, Slack, Discord, webhooks) and unsubscribing' },
      { name: 'Operator', description: 'Accounts, plans, suspension, ad-hoc SQL and dead letters (operator token)' },
      { name: 'Data rights', description: 'Exports, erasure of an SDK user’s data and deletions (docs/data-rights.md)' },
      { name: 'CORS', description: 'Preflights of the client app’s routes, for web pages (docs/ingestion.md, “Protocol”)' },
      { name: 'Service', description: 'Health, this document and its rendering (no authentication)' },
    ],
  });
  for (const pathItem of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(pathItem as Record<string, { parameters?: unknown[] }>)) {
      for (const parameter of operation.parameters ?? []) normalizeParameter(parameter);
    }
  }
  return document;
}

/**
 * Parameters are strings on the wire and never null: the generator marks a coercing number
 * (`z.coerce`) nullable because `null` coerces, and gives a transformed parameter's default after
 * its transform; neither describes what a client sends.
 */
function normalizeParameter(parameter: unknown) {
  const schema = (parameter as { schema?: Record<string, unknown> }).schema;
  if (!schema) return;
  delete schema.nullable;
  if (schema.type === 'string' && schema.default !== undefined && typeof schema.default !== 'string') {
    schema.default = String(schema.default);
  }
}

/** The document as YAML, the format served at /openapi/openapi.yaml. */
export function openApiYaml(): string {
  return stringify(buildOpenApiDocument(), { aliasDuplicateObjects: false, lineWidth: 0 });
}
