import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { openApiPath, type RouteDefinition } from '../define-route.js';
import { error, PUBLIC } from '../shared/building-blocks.js';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from './client-cors.js';

const text = { type: 'string' as const };

/**
 * The CORS preflight of each path of the client routes (those marked `cors`: SPEC part 4 and
 * /events/batch), in the routes' order. Registered on the registry itself, not through `route`: a
 * preflight is answered before the rate limiter, so it has no 429.
 */
export function registerCorsPaths(registry: OpenAPIRegistry, routes: readonly RouteDefinition[]) {
  const paths = new Map<string, RouteDefinition['params']>();
  for (const route of routes) {
    if (route.cors && !paths.has(route.path)) paths.set(route.path, route.params);
  }
  for (const [koaPath, params] of paths) {
    const path = openApiPath(koaPath);
    registry.registerPath({
      method: 'options',
      path,
      // `/feedbacks/{id}/votes` → preflightFeedbacksIdVotes, `/users/{userId}` → preflightUsersUserId.
      operationId: `preflight${path
        .replace(/\{(\w)(\w*)\}/g, (_, c: string, rest: string) => c.toUpperCase() + rest)
        .replace(/(?:^|\/)(\w)/g, (_, c: string) => c.toUpperCase())}`,
      tags: ['CORS'],
      summary: 'CORS preflight',
      description:
        'Answered for any `Origin` (a preflight carries no API key). The actual request then gets ' +
        '`Access-Control-Allow-Origin` (its Origin), `Access-Control-Expose-Headers` and `Vary: Origin`, on errors too; ' +
        'it is refused with 403 when the key’s project restricts `allowed_origins` and the Origin is not listed. ' +
        'No credentials are allowed: the API key is the credential.',
      security: PUBLIC,
      ...(params ? { request: { params } } : {}),
      responses: {
        204: {
          description: 'The preflight answer (with an `Origin` header).',
          headers: {
            'Access-Control-Allow-Origin': { description: 'The request’s Origin.', schema: text },
            'Access-Control-Allow-Methods': { description: `\`${CORS_ALLOWED_METHODS}\``, schema: text },
            'Access-Control-Allow-Headers': { description: `\`${CORS_ALLOWED_HEADERS}\``, schema: text },
            'Access-Control-Max-Age': { description: `${CORS_MAX_AGE_SECONDS} seconds.`, schema: { type: 'integer' as const } },
            Vary: { description: '`Origin`.', schema: text },
          },
        },
        200: {
          description: `Without an \`Origin\` header this is no preflight: the methods of the path, in \`Allow\`. Pages may read \`${CORS_EXPOSED_HEADERS}\` of the actual answers.`,
          headers: { Allow: { description: 'The methods of this path.', schema: text } },
        },
        400: error('Without an `Origin` header: a query string no store can hold (a lone UTF-16 surrogate or NUL), like on every route.'),
      },
    });
  }
}
