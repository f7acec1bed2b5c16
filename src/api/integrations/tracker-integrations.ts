import { newSecret, WEBHOOK_SECRET_PREFIX } from '../../core/secrets.js';
import { DEFAULT_API_URLS, GITHUB_STATES, LINEAR_STATE_TYPES, type TrackerKind } from '../../core/trackers.js';
import type { IntegrationKind } from '../../oltp/integrations.repo.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { changedStatusMap, defaultStatusMap, isMapState, type StatusMap, type StatusMapChange } from '../../oltp/tracker-status-map.js';
import { countLinks, createTrackerIntegration, type TrackerIntegrationRow, updateTrackerIntegration } from '../../oltp/trackers.repo.js';
import type { RouteDeps } from '../define-route.js';
import { badRequest, conflict } from '../errors.js';
import type { CreateIntegrationBody, UpdateIntegrationBody } from './integrations.schema.js';
import { presentTrackerIntegration } from './tracker-integrations.presenter.js';

/*
 * Creating and changing tracker integrations (kind `github` or `linear`, docs/integrations.md):
 * the checks of their own fields, the SSRF guard of their api_url, the sealing of their token and
 * webhook secret. POST and PATCH /projects/:id/integrations call these for those kinds.
 */

type TrackerFieldsOf<B> = Pick<
  B,
  Extract<keyof B, 'token' | 'apiUrl' | 'repository' | 'teamId' | 'linearProjectId' | 'statusMap' | 'webhookSecret' | 'autoCreate'>
>;

const TRACKER_FIELD_NAMES = {
  token: 'token',
  apiUrl: 'apiUrl',
  repository: 'repository',
  teamId: 'teamId',
  linearProjectId: 'linearProjectId',
  statusMap: 'statusMap',
  webhookSecret: 'webhookSecret',
  autoCreate: 'autoCreate',
} as const;

/** A Slack, Discord or webhook integration sent a tracker's field: 400 naming it. */
export function refuseTrackerFields(kind: IntegrationKind, body: Partial<TrackerFieldsOf<CreateIntegrationBody>>): void {
  for (const [field, name] of Object.entries(TRACKER_FIELD_NAMES)) {
    if ((body as Record<string, unknown>)[field] !== undefined)
      throw badRequest(`${name}: only github and linear integrations have it (this one is ${kind})`);
  }
}

/** A tracker sent a field of the message kinds: 400 naming it and what it takes instead. */
function refuseMessageFields(kind: TrackerKind, body: { url?: unknown; secret?: unknown; events?: unknown }): void {
  if (body.url !== undefined) throw badRequest(`url: a ${kind} integration takes its address as apiUrl`);
  if (body.secret !== undefined) throw badRequest(`secret: a ${kind} integration has a webhookSecret instead`);
  if (body.events !== undefined && body.events !== null) {
    throw badRequest(`events: a ${kind} integration takes no notification messages: it follows its linked items`);
  }
}

function checkTargets(kind: TrackerKind, body: { repository?: unknown; teamId?: unknown; linearProjectId?: unknown }): void {
  if (kind === 'github' && body.teamId !== undefined) throw badRequest('teamId: a github integration has a repository instead');
  if (kind === 'github' && body.linearProjectId !== undefined) throw badRequest('linearProjectId: only linear integrations have it');
  if (kind === 'linear' && body.repository !== undefined) throw badRequest('repository: a linear integration has a teamId instead');
}

function checkApiUrl(deps: RouteDeps, url: string): void {
  const refused = deps.trackers.refusedApiUrl(url);
  if (refused) throw badRequest(`apiUrl: ${refused}`);
}

/** The map a change makes, each state checked against the tracker's (400 naming the entry). */
function statusMapAfter(kind: TrackerKind, current: StatusMap, change: StatusMapChange | undefined): StatusMap {
  if (!change) return current;
  const what =
    kind === 'github'
      ? `one of ${GITHUB_STATES.join(', ')}`
      : `a Linear state type (${LINEAR_STATE_TYPES.join(', ')}) or a workflow state id`;
  for (const [status, state] of Object.entries(change.out ?? {})) {
    if (state !== undefined && !isMapState(kind, state)) throw badRequest(`statusMap.out.${status}: must be ${what}`);
  }
  for (const state of Object.keys(change.in ?? {})) {
    if (!isMapState(kind, state)) throw badRequest(`statusMap.in.${state}: the state must be ${what}`);
  }
  if (change.labels !== undefined && kind !== 'github') throw badRequest('statusMap.labels: only github integrations put labels on issues');
  return changedStatusMap(current, change);
}

/** POST /projects/:id/integrations for `github` and `linear`: the integration, with its generated webhook secret. */
export async function createTracker(deps: RouteDeps, project: ProjectWithPlan, body: CreateIntegrationBody) {
  const kind = body.kind as TrackerKind;
  refuseMessageFields(kind, body);
  checkTargets(kind, body);
  if (body.token === undefined) throw badRequest('token: is required');
  const target = kind === 'github' ? body.repository : body.teamId;
  if (target === undefined) throw badRequest(kind === 'github' ? 'repository: is required' : 'teamId: is required');
  const apiUrl = body.apiUrl ?? DEFAULT_API_URLS[kind];
  checkApiUrl(deps, apiUrl);
  const statusMap = statusMapAfter(kind, defaultStatusMap(kind), body.statusMap);
  const generated = body.webhookSecret === undefined ? newSecret(WEBHOOK_SECRET_PREFIX) : undefined;
  const row = await deps.sql.begin((tx) =>
    createTrackerIntegration(tx, {
      projectId: project.id,
      kind,
      apiUrl,
      enabled: body.enabled,
      tokenSealed: deps.secretBox.seal(body.token as string),
      webhookSecretSealed: deps.secretBox.seal(body.webhookSecret ?? (generated as string)),
      target,
      linearProjectId: body.linearProjectId ?? null,
      statusMap,
      autoCreate: body.autoCreate ?? false,
    }),
  );
  return presentTrackerIntegration(row, row.settings, deps.config.delivery.publicUrl, generated);
}

/** PATCH /projects/:id/integrations/:integrationId for a tracker. */
export async function updateTracker(
  deps: RouteDeps,
  project: ProjectWithPlan,
  current: TrackerIntegrationRow,
  body: UpdateIntegrationBody,
) {
  const kind = current.kind;
  refuseMessageFields(kind, body);
  checkTargets(kind, body);
  if (body.apiUrl !== undefined) checkApiUrl(deps, body.apiUrl);
  // Linked issues are issues of the current repository or team (a GitHub issue is its number
  // there): another target would point every link at someone else's issue.
  const target = kind === 'github' ? body.repository : body.teamId;
  if (target !== undefined && target !== current.settings.target) {
    const linked = await countLinks(deps.sql, current.id);
    if (linked > 0) {
      throw conflict(
        `${kind === 'github' ? 'repository' : 'teamId'}: ${linked} linked issue(s) are in ${current.settings.target}: unlink them, or add another integration for the new one`,
      );
    }
  }
  const statusMap = body.statusMap ? statusMapAfter(kind, current.settings.status_map, body.statusMap) : undefined;
  const updated = await updateTrackerIntegration(deps.sql, project.id, current.id, {
    apiUrl: body.apiUrl,
    enabled: body.enabled,
    tokenSealed: body.token === undefined ? undefined : deps.secretBox.seal(body.token),
    webhookSecretSealed: body.webhookSecret === undefined ? undefined : deps.secretBox.seal(body.webhookSecret),
    target,
    linearProjectId: body.linearProjectId,
    statusMap,
    autoCreate: body.autoCreate,
  });
  return updated ? presentTrackerIntegration(updated, updated.settings, deps.config.delivery.publicUrl) : null;
}
