import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { API_PREFIX } from '../api-prefix.js';
import type { ApiDeps } from '../deps.js';
import { errorBodyOf } from '../errors.js';
import { error, PUBLIC } from '../shared/building-blocks.js';
import type { RequestContext } from '../state.js';

/*
 * CORS of the published saved queries (GET /api/v1/q/:id, endpoints/endpoints.routes.ts): opt-in
 * per endpoint, by the exact origins of its cors_origins. The actual call's headers are set by its
 * route; this is the preflight, which carries no token and is answered before the rate limiter.
 */

/** The preflight of GET /q/:id: answered for the endpoint's listed origins only (a preflight carries no token). */
export function endpointPreflight() {
  const path = new RegExp(`^${API_PREFIX}/q/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\\.(?:json|csv|ndjson))?$`);
  return async (ctx: RequestContext, next: () => Promise<unknown>, deps: Pick<ApiDeps, 'sql'>) => {
    const id = ctx.method === 'OPTIONS' ? path.exec(ctx.path)?.[1] : undefined;
    const origin = ctx.req.headers.origin;
    if (id === undefined || origin === undefined) return next();
    ctx.vary('Origin');
    const [row] = await deps.sql<{ cors_origins: string[] }[]>`select cors_origins from saved_query_endpoints where id = ${id}`;
    if (!row) {
      ctx.status = 404;
      ctx.body = errorBodyOf('endpoint not found');
      return;
    }
    ctx.status = 204;
    if (!row.cors_origins.includes(origin)) return; // no Access-Control-Allow-Origin: the browser refuses the call
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Methods', 'GET');
    ctx.set('Access-Control-Allow-Headers', 'Authorization');
    ctx.set('Access-Control-Max-Age', '600');
  };
}

/** The preflight in the OpenAPI document (registered beside the client routes' ones). */
export function registerEndpointPreflight(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'options',
    path: '/q/{endpoint}',
    operationId: 'preflightQueryEndpoint',
    tags: ['CORS'],
    summary: 'CORS preflight of a query endpoint',
    description:
      'Answered 204 with `Access-Control-Allow-Origin` (the Origin), `Access-Control-Allow-Methods: GET`, `Access-Control-Allow-Headers: Authorization` when the endpoint lists the Origin in its `cors_origins`; without them otherwise (the browser then refuses the call).',
    security: PUBLIC,
    request: { params: z.object({ endpoint: z.string() }) },
    responses: {
      204: {
        description: 'The preflight answer.',
        headers: {
          'Access-Control-Allow-Origin': { description: 'The Origin, when the endpoint lists it.', schema: { type: 'string' } },
          Vary: { description: '`Origin`.', schema: { type: 'string' } },
        },
      },
      400: error('A path segment no store can hold (NUL), refused before any lookup.'),
      404: error('No such endpoint (never published, or unpublished).'),
    },
  });
}
