import { z } from 'zod';
import { API_SERVER, describe, error, PUBLIC, ROOT_SERVER, type Route } from './building-blocks.js';

/** Files the docs page loads, all served by openapi.router.ts. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-initializer.js'] as const;

/** This document and its rendering, outside /api/v1. */
export function registerDocsPaths(route: Route) {
  route({
    method: 'get',
    path: '/openapi/openapi.yaml',
    operationId: 'openapiDocument',
    tags: ['Service'],
    summary: 'This OpenAPI document',
    description: 'Served at /openapi/openapi.yaml and at /api/v1/openapi/openapi.yaml.',
    servers: [{ url: '/', description: ROOT_SERVER[0]?.description ?? '' }, API_SERVER],
    security: PUBLIC,
    responses: { 200: { description: 'OpenAPI 3.0 document, YAML.', content: { 'application/yaml': { schema: z.string() } } } },
  });

  route({
    method: 'get',
    path: '/docs',
    operationId: 'docsPage',
    tags: ['Service'],
    summary: 'Rendered API documentation (Swagger UI)',
    description: 'Served entirely by this service (no CDN).',
    servers: ROOT_SERVER,
    security: PUBLIC,
    responses: { 200: { description: 'HTML page.', content: { 'text/html': { schema: z.string() } } } },
  });

  route({
    method: 'get',
    path: '/docs/{asset}',
    operationId: 'docsAsset',
    tags: ['Service'],
    summary: 'A static asset of the docs page',
    servers: ROOT_SERVER,
    security: PUBLIC,
    request: { params: z.object({ asset: describe(z.enum(DOCS_ASSETS), 'File name.') }) },
    responses: {
      200: {
        description: 'The asset (JavaScript or CSS).',
        content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
      },
      400: error('A path segment that decodes to NUL, refused on every path before routing.'),
      404: error('No such asset.'),
    },
  });
}
