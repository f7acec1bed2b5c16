import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Router } from '@koa/router';
import { notFound } from '../errors.js';
import type { AppState, RequestContext } from '../state.js';
import { DOCS_ASSETS } from './docs.openapi.js';
import { openApiYaml } from './document.js';

export const OPENAPI_PATH = '/openapi/openapi.yaml';
export const DOCS_PATH = '/docs';

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

type Asset = (typeof DOCS_ASSETS)[number];
const isAsset = (name: string): name is Asset => (DOCS_ASSETS as readonly string[]).includes(name);

/**
 * SPEC 9: the OpenAPI document as YAML at /openapi/openapi.yaml and under the API prefix, and the
 * rendered docs at /docs. No authentication. The document is generated from the zod schemas on
 * the first request and kept: it cannot change while the process runs.
 */
export function openapiRouter({ apiPrefix }: { apiPrefix: string }): Router<AppState> {
  const router = new Router<AppState>();
  let yaml: string | undefined;

  const document = (ctx: RequestContext) => {
    yaml ??= openApiYaml();
    ctx.type = 'application/yaml; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = yaml;
  };
  router.get(OPENAPI_PATH, document);
  router.get(`${apiPrefix}${OPENAPI_PATH}`, document);

  router.get(DOCS_PATH, (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.body = DOCS_HTML;
  });

  router.get(`${DOCS_PATH}/:asset`, (ctx) => {
    const asset = ctx.params.asset ?? '';
    if (!isAsset(asset)) throw notFound(`no docs asset ${asset}`);
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (asset === 'swagger-initializer.js') {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.body = INITIALIZER;
      return;
    }
    ctx.type = asset.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
    ctx.body = createReadStream(path.join(swaggerUiDir, asset));
  });

  return router;
}
