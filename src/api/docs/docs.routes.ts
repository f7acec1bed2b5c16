import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { z } from 'zod';
import { defineRoute } from '../define-route.js';
import { API_SERVER, describe, error, ROOT_SERVER } from '../shared/building-blocks.js';

export const OPENAPI_PATH = '/openapi/openapi.yaml';
export const DOCS_PATH = '/docs';

/** Files the docs page loads, all served by the docs asset route below. */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-initializer.js'] as const;

/** Where npm put swagger-ui-dist: its static files are served from there, never from a CDN. */
const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * The docs page: Swagger UI, every file of it served by this service (no network access needed at
 * run time). The script that starts it is a file too, so the page runs under a CSP that allows
 * only this origin's scripts.
 */
const DOCS_HTML = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Feedback service API</title>
    <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
    <script src="${DOCS_PATH}/swagger-initializer.js"></script>
  </body>
</html>
`;

/** validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io. */
const INITIALIZER = `window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(OPENAPI_PATH)},
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
});
`;

const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Swagger UI sets inline styles.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * SPEC 9: the OpenAPI document as YAML at /openapi/openapi.yaml and under the API prefix, and the
 * rendered docs at /docs. No authentication. The document is generated from the zod schemas on
 * the first request and kept (the app's `openApiYaml`): it cannot change while the process runs.
 */
export const docsRoutes = [
  defineRoute({
    method: 'get',
    path: OPENAPI_PATH,
    mount: 'rootAndApi',
    auth: 'public',
    operationId: 'openapiDocument',
    tags: ['Service'],
    summary: 'This OpenAPI document',
    description: 'Served at /openapi/openapi.yaml and at /api/v1/openapi/openapi.yaml.',
    servers: [{ url: '/', description: ROOT_SERVER[0]?.description ?? '' }, API_SERVER],
    responses: { 200: { description: 'OpenAPI 3.0 document, YAML.', content: { 'application/yaml': { schema: z.string() } } } },
    handler: (ctx, { openApiYaml }) => {
      ctx.type = 'application/yaml; charset=utf-8';
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = openApiYaml();
    },
  }),
  defineRoute({
    method: 'get',
    path: DOCS_PATH,
    mount: 'root',
    auth: 'public',
    operationId: 'docsPage',
    tags: ['Service'],
    summary: 'Rendered API documentation (Swagger UI)',
    description: 'Served entirely by this service (no CDN).',
    servers: ROOT_SERVER,
    responses: { 200: { description: 'HTML page.', content: { 'text/html': { schema: z.string() } } } },
    handler: (ctx) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', DOCS_CSP);
      ctx.body = DOCS_HTML;
    },
  }),
  defineRoute({
    method: 'get',
    path: `${DOCS_PATH}/:asset`,
    mount: 'root',
    auth: 'public',
    operationId: 'docsAsset',
    tags: ['Service'],
    summary: 'A static asset of the docs page',
    servers: ROOT_SERVER,
    params: z.object({ asset: describe(z.enum(DOCS_ASSETS, { error: (issue) => `no docs asset ${String(issue.input)}` }), 'File name.') }),
    responses: {
      200: {
        description: 'The asset (JavaScript or CSS).',
        content: { 'text/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } },
      },
      400: error('A path segment that decodes to NUL, refused on every path before routing.'),
      404: error('No such asset.'),
    },
    handler: (ctx, _deps, { params: { asset } }) => {
      ctx.set('Cache-Control', 'public, max-age=3600');
      if (asset === 'swagger-initializer.js') {
        ctx.type = 'text/javascript; charset=utf-8';
        ctx.body = INITIALIZER;
        return;
      }
      ctx.type = asset.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
      ctx.body = createReadStream(path.join(swaggerUiDir, asset));
    },
  }),
];
