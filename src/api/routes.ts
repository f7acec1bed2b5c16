import { accountRoutes } from './account/account.routes.js';
import { deliveryRoutes } from './deliveries/deliveries.routes.js';
import { eventRoutes } from './events/events.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { identityRoutes } from './identity/identity.routes.js';
import { insightsRoutes } from './insights/insights.routes.js';
import { integrationRoutes } from './integrations/integrations.routes.js';
import { memberRoutes } from './members/members.routes.js';
import { metricsRoutes } from './metrics/metrics.routes.js';
import { adminAccountRoutes } from './operator/admin-accounts.routes.js';
import { operatorRoutes } from './operator/operator.routes.js';
import { projectRoutes } from './projects/projects.routes.js';
import { projectSqlRoutes } from './sql/project-sql.routes.js';
import { sqlRoutes } from './sql/sql.routes.js';
import { unsubscribeRoutes } from './unsubscribe/unsubscribe.routes.js';
import { userRoutes } from './users/users.routes.js';

/*
 * Every route declared with defineRoute, by resource: the app registers these lists on Koa
 * (app.ts) and the OpenAPI document reads the same lists (openapi/document.ts). A new resource
 * exports its list from <resource>.routes.ts and adds it here.
 */

/** The ingestion routes: the hot path, matched before any other route (app.ts). */
export const INGESTION_ROUTES = eventRoutes;

/** Outside the /api/v1 prefix, without auth. */
export const ROOT_ROUTES = healthRoutes;

export {
  accountRoutes,
  adminAccountRoutes,
  deliveryRoutes,
  identityRoutes,
  insightsRoutes,
  integrationRoutes,
  memberRoutes,
  metricsRoutes,
  operatorRoutes,
  projectRoutes,
  projectSqlRoutes,
  sqlRoutes,
  unsubscribeRoutes,
  userRoutes,
};
