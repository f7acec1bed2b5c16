import { apiTime, apiTimeOrNull } from '../../core/time.js';
import type { TrackerKind } from '../../core/trackers.js';
import type { IntegrationEvent, IntegrationRow } from '../../oltp/integrations.repo.js';
import type { TrackerSettingsRow } from '../../oltp/trackers.repo.js';
import { API_PREFIX } from '../api-prefix.js';

/** The address a tracker posts its webhooks to, for this integration: pasted into GitHub or Linear. */
export const webhookUrl = (publicUrl: string, kind: TrackerKind, integrationId: string) =>
  `${publicUrl}${API_PREFIX}/integrations/${kind}/webhook?integration=${integrationId}`;

/**
 * A tracker integration (GitHub or Linear): the fields of every integration, and its own. Its
 * token is never shown, nor its webhook secret, except the one the server generated, in the
 * response that creates the integration.
 */
export function presentTrackerIntegration(row: IntegrationRow, settings: TrackerSettingsRow, publicUrl: string, generatedSecret?: string) {
  const kind = row.kind as TrackerKind;
  const map = settings.status_map;
  return {
    id: row.id,
    project_id: row.project_id,
    kind,
    url: row.url,
    events: [] as IntegrationEvent[],
    enabled: row.enabled,
    has_secret: true,
    api_url: row.url,
    repository: kind === 'github' ? settings.target : null,
    team_id: kind === 'linear' ? settings.target : null,
    linear_project_id: settings.linear_project_id,
    status_map: { out: map.out, in: map.in, labels: map.labels ?? null },
    auto_create: settings.auto_create,
    webhook_url: webhookUrl(publicUrl, kind, row.id),
    has_token: true,
    needs_attention: settings.needs_attention,
    needs_attention_at: apiTimeOrNull(settings.needs_attention_at),
    ...(generatedSecret === undefined ? {} : { webhook_secret: generatedSecret }),
    created_at: apiTime(row.created_at),
    updated_at: apiTime(row.updated_at),
  };
}
