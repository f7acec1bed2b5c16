import { accountRoutes } from './account/account.routes.js';
import { alertRoutes } from './alerts/alerts.routes.js';
import { changelogRoutes } from './changelog/changelog.routes.js';
import { clickhouseCredentialRoutes } from './clickhouse/credentials.routes.js';
import { deletionRoutes } from './data-rights/deletion.routes.js';
import { erasureRoutes } from './data-rights/erasure.routes.js';
import { exportRoutes } from './data-rights/exports.routes.js';
import type { RouteDefinition } from './define-route.js';
import { deliveryRoutes } from './deliveries/deliveries.routes.js';
import { digestRoutes } from './digest/digest.routes.js';
import { docsRoutes } from './docs/docs.routes.js';
import { guideRoutes } from './docs/guides.routes.js';
import { endpointRoutes } from './endpoints/endpoints.routes.js';
import { eventRoutes } from './events/events.routes.js';
import { feedbackRoutes } from './feedback/feedback.routes.js';
import { projectFeedbackRoutes } from './feedback/project-feedback.routes.js';
import { similarFeedbackRoutes } from './feedback/similar.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { identityRoutes } from './identity/identity.routes.js';
import { insightsRoutes } from './insights/insights.routes.js';
import { integrationRoutes } from './integrations/integrations.routes.js';
import { trackerDiscoveryRoutes } from './integrations/tracker-discovery.routes.js';
import { trackerWebhookRoutes } from './integrations/tracker-webhooks.routes.js';
import { issueRoutes } from './issues/issues.routes.js';
import { memberRoutes } from './members/members.routes.js';
import { metricsRoutes } from './metrics/metrics.routes.js';
import { adminAccountRoutes } from './operator/admin-accounts.routes.js';
import { operatorRoutes } from './operator/operator.routes.js';
import { projectRoutes } from './projects/projects.routes.js';
import { projectSqlRoutes } from './sql/project-sql.routes.js';
import { sqlRoutes } from './sql/sql.routes.js';
import { unsubscribeRoutes } from './unsubscribe/unsubscribe.routes.js';
import { timelineRoutes } from './users/timeline.routes.js';
import { userRoutes } from './users/users.routes.js';

/**
 * Every route of the service, each declared once with defineRoute in its resource folder
 * (<resource>/<resource>.routes.ts): app.ts registers this list on Koa and openapi/document.ts
 * describes it, both in this order. A new resource adds its list here.
 *
 * The order is the routing order: Koa runs the first route whose method and pattern match, so a
 * literal segment comes before a parameter in the same place (`/projects/:id/feedbacks/counts`
 * before `/projects/:id/feedbacks/:feedbackId`, inside project-feedback.routes.ts), and a 405's
 * `Allow` lists a path's methods in this order. How a route is served (`mount`, `hotPath`, `cors`)
 * is part of its declaration.
 */
export const ROUTES: readonly RouteDefinition[] = [
  // The client app's routes (SPEC part 4), the ingestion hot path among them.
  ...similarFeedbackRoutes,
  ...feedbackRoutes,
  ...userRoutes,
  ...eventRoutes,
  ...metricsRoutes,
  // The operator's and the admin token's.
  ...sqlRoutes,
  ...operatorRoutes,
  ...accountRoutes,
  ...projectRoutes,
  ...timelineRoutes,
  ...identityRoutes,
  ...projectFeedbackRoutes,
  ...changelogRoutes,
  ...deliveryRoutes,
  ...unsubscribeRoutes,
  ...memberRoutes,
  ...integrationRoutes,
  // Issue trackers (docs/integrations.md): discovery for the setup, an item's issues, the trackers' webhooks.
  ...trackerDiscoveryRoutes,
  ...issueRoutes,
  ...trackerWebhookRoutes,
  // Alerts on metrics and the weekly digest (docs/notifications.md).
  ...alertRoutes,
  ...digestRoutes,
  // Data rights (docs/data-rights.md): exports, erasure, deletions, operator account tools.
  ...exportRoutes,
  ...erasureRoutes,
  ...deletionRoutes,
  ...adminAccountRoutes,
  ...projectSqlRoutes,
  ...clickhouseCredentialRoutes,
  ...endpointRoutes,
  // Insights (docs/insights.md): funnels, retention, event names, feature impact, saved queries, live view.
  ...insightsRoutes,
  // Outside /api/v1, without auth: health checks, the OpenAPI document and its rendering.
  ...healthRoutes,
  ...guideRoutes,
  ...docsRoutes,
];
