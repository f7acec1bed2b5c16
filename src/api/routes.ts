import type { RouteDefinition } from './define-route.js';
import { eventRoutes } from './events/events.routes.js';
import { healthRoutes } from './health/health.routes.js';

/*
 * Every route declared with defineRoute, by resource: the app registers these lists on Koa and the
 * OpenAPI document reads the same lists. A new resource adds its <resource>.routes.ts here.
 */

/** The ingestion routes: the hot path, matched before any other route (app.ts). */
export const INGESTION_ROUTES: readonly RouteDefinition[] = eventRoutes;

/** Outside the /api/v1 prefix, without auth. */
export const ROOT_ROUTES: readonly RouteDefinition[] = healthRoutes;
