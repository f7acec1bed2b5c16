import { apiTime } from '../../core/time.js';
import type { IntegrationRow, MessageKind } from '../../oltp/integrations.repo.js';

/**
 * Integration of a project. Its secret is never shown, except the one the server generated for a
 * new webhook, in the response that creates it.
 */
export function presentIntegration(row: IntegrationRow, generatedSecret?: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind as MessageKind,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    has_secret: row.has_secret,
    ...(generatedSecret === undefined ? {} : { secret: generatedSecret }),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
