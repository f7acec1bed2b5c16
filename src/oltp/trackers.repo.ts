import type { Plan } from '../core/plans.js';
import type { TrackerKind } from '../core/trackers.js';
import type { SqlLike } from './db.js';
import type { FeedbackStatus } from './feedback.row.js';
import type { IntegrationRow } from './integrations.repo.js';
import type { StatusMap } from './tracker-status-map.js';

/*
 * Tracker integrations (GitHub, Linear), their links to items and their recorded webhooks
 * (sql/postgres/030_trackers.sql, docs/integrations.md). The sealed token and webhook secret are
 * read only by the functions that name them (`…Secrets`): the rows the API presents never carry them.
 */

/** What a tracker integration has beyond an integration row, as the API presents it. */
export type TrackerSettingsRow = {
  integration_id: string;
  target: string;
  linear_project_id: string | null;
  status_map: StatusMap;
  needs_attention: string | null;
  needs_attention_at: Date | null;
  /** Every new item of the project gets its issue here by itself (migration 032). */
  auto_create: boolean;
};

export type TrackerIntegrationRow = IntegrationRow & { kind: TrackerKind; settings: TrackerSettingsRow };

/** A tracker integration with what a call needs: its sealed secrets, and the plan it is on. */
export type TrackerForCall = TrackerIntegrationRow & { token_sealed: string; webhook_secret_sealed: string; plan: Plan };

const settingsColumns = (sql: SqlLike) =>
  sql`s.integration_id, s.target, s.linear_project_id, s.status_map, s.needs_attention, s.needs_attention_at, s.auto_create`;

type JoinedRow = IntegrationRow & TrackerSettingsRow & { token_sealed?: string; webhook_secret_sealed?: string; plan?: Plan };

function split(row: JoinedRow): TrackerIntegrationRow {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind as TrackerKind,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    has_secret: row.has_secret,
    created_at: row.created_at,
    updated_at: row.updated_at,
    settings: {
      integration_id: row.integration_id,
      target: row.target,
      linear_project_id: row.linear_project_id,
      status_map: row.status_map,
      needs_attention: row.needs_attention,
      needs_attention_at: row.needs_attention_at,
      auto_create: row.auto_create,
    },
  };
}

/**
 * Creates a tracker integration: the integration row (its url the api_url, `events` the empty
 * array: it takes no notification messages, migration 030) and its settings. Call it in a transaction.
 */
export async function createTrackerIntegration(
  sql: SqlLike,
  input: {
    projectId: string;
    kind: TrackerKind;
    apiUrl: string;
    enabled: boolean;
    tokenSealed: string;
    webhookSecretSealed: string;
    target: string;
    linearProjectId: string | null;
    statusMap: StatusMap;
    autoCreate: boolean;
  },
): Promise<TrackerIntegrationRow> {
  const [created] = await sql<{ id: string }[]>`
    insert into integrations (project_id, kind, url, secret, events, enabled)
    values (${input.projectId}, ${input.kind}, ${input.apiUrl}, null, '{}'::text[], ${input.enabled})
    returning id`;
  const id = (created as { id: string }).id;
  await sql`
    insert into tracker_settings (integration_id, token_sealed, webhook_secret_sealed, target, linear_project_id, status_map, auto_create)
    values (${id}, ${input.tokenSealed}, ${input.webhookSecretSealed}, ${input.target}, ${input.linearProjectId},
            ${sql.json(input.statusMap as never)}, ${input.autoCreate})`;
  return (await findTrackerIntegration(sql, input.projectId, id)) as TrackerIntegrationRow;
}

/** A project's tracker integration, without its secrets; null when it is not one (or not there). */
export async function findTrackerIntegration(sql: SqlLike, projectId: string, id: string): Promise<TrackerIntegrationRow | null> {
  const [row] = await sql<JoinedRow[]>`
    select i.id, i.project_id, i.kind, i.url, i.events, i.enabled, true as has_secret, i.created_at, i.updated_at, ${settingsColumns(sql)}
    from integrations i
    join tracker_settings s on s.integration_id = i.id
    where i.id = ${id} and i.project_id = ${projectId}`;
  return row ? split(row) : null;
}

/** The settings of a project's tracker integrations, by integration id (for the integration list). */
export async function trackerSettingsOf(sql: SqlLike, projectId: string): Promise<Map<string, TrackerSettingsRow>> {
  const rows = await sql<TrackerSettingsRow[]>`
    select ${settingsColumns(sql)}
    from tracker_settings s
    join integrations i on i.id = s.integration_id
    where i.project_id = ${projectId}`;
  return new Map(rows.map((row) => [row.integration_id, row]));
}

/**
 * A tracker integration with its sealed secrets and the account's plan, for a call or a
 * webhook's signature. `projectId` null: by id alone (the webhook routes know only the id).
 */
export async function trackerForCall(sql: SqlLike, projectId: string | null, id: string): Promise<TrackerForCall | null> {
  const [row] = await sql<JoinedRow[]>`
    select i.id, i.project_id, i.kind, i.url, i.events, i.enabled, true as has_secret, i.created_at, i.updated_at, ${settingsColumns(sql)},
           s.token_sealed, s.webhook_secret_sealed, a.plan
    from integrations i
    join tracker_settings s on s.integration_id = i.id
    join projects p on p.id = i.project_id
    join accounts a on a.id = p.account_id
    where i.id = ${id} ${projectId === null ? sql`` : sql`and i.project_id = ${projectId}`}`;
  if (!row) return null;
  return {
    ...split(row),
    token_sealed: row.token_sealed as string,
    webhook_secret_sealed: row.webhook_secret_sealed as string,
    plan: row.plan as Plan,
  };
}

/** Changes the given settings (and the integration's url and enabled); absent fields are kept. */
export async function updateTrackerIntegration(
  sql: SqlLike,
  projectId: string,
  id: string,
  changes: {
    apiUrl?: string | undefined;
    enabled?: boolean | undefined;
    tokenSealed?: string | undefined;
    webhookSecretSealed?: string | undefined;
    target?: string | undefined;
    linearProjectId?: string | null | undefined;
    statusMap?: StatusMap | undefined;
    autoCreate?: boolean | undefined;
  },
): Promise<TrackerIntegrationRow | null> {
  const [integration] = await sql<{ id: string }[]>`
    update integrations set
      url = coalesce(${changes.apiUrl ?? null}, url),
      enabled = coalesce(${changes.enabled ?? null}::boolean, enabled),
      updated_at = now()
    where id = ${id} and project_id = ${projectId}
    returning id`;
  if (!integration) return null;
  const setProject = changes.linearProjectId !== undefined;
  // A new token may be the fix of a refused one: the integration works again until a call says otherwise.
  const newToken = changes.tokenSealed !== undefined;
  await sql`
    update tracker_settings set
      token_sealed = coalesce(${changes.tokenSealed ?? null}, token_sealed),
      webhook_secret_sealed = coalesce(${changes.webhookSecretSealed ?? null}, webhook_secret_sealed),
      target = coalesce(${changes.target ?? null}, target),
      linear_project_id = case when ${setProject}::boolean then ${changes.linearProjectId ?? null} else linear_project_id end,
      status_map = coalesce(${changes.statusMap ? sql.json(changes.statusMap as never) : null}::jsonb, status_map),
      auto_create = coalesce(${changes.autoCreate ?? null}::boolean, auto_create),
      needs_attention = case when ${newToken}::boolean then null else needs_attention end,
      needs_attention_at = case when ${newToken}::boolean then null else needs_attention_at end
    where integration_id = ${id}`;
  return findTrackerIntegration(sql, projectId, id);
}

/** Records that the tracker refused the integration's token: calls stop until the owner gives another. */
export async function markNeedsAttention(sql: SqlLike, id: string, reason: string): Promise<void> {
  await sql`
    update tracker_settings set needs_attention = ${reason.slice(0, 500)}, needs_attention_at = now()
    where integration_id = ${id}`;
}

// Links

export type TrackerLinkRow = {
  id: string;
  project_id: string;
  feedback_id: string;
  integration_id: string;
  kind: TrackerKind;
  external_id: string;
  issue_key: string;
  url: string;
  title: string;
  state: string;
  state_name: string;
  synced_status: FeedbackStatus | null;
  created_at: Date;
  updated_at: Date;
};

const linkColumns = (sql: SqlLike) =>
  sql`l.id, l.project_id, l.feedback_id, l.integration_id, i.kind, l.external_id, l.issue_key, l.url, l.title, l.state, l.state_name,
      l.synced_status, l.created_at, l.updated_at`;

export type NewLink = {
  projectId: string;
  feedbackId: string;
  integrationId: string;
  externalId: string;
  issueKey: string;
  url: string;
  title: string;
  state: string;
  stateName: string;
  syncedStatus: FeedbackStatus | null;
  /** The votes line written into the description of an issue made from the item. */
  votesLine?: string | null;
};

/**
 * Links an issue to an item. `taken` when the item already has an issue of this integration, or
 * the issue is linked to another item: nothing is written then.
 */
export async function insertLink(
  sql: SqlLike,
  link: NewLink,
): Promise<{ kind: 'linked'; link: TrackerLinkRow } | { kind: 'taken'; by: 'item' | 'issue'; feedbackId: string }> {
  const [existing] = await sql<{ feedback_id: string; external_id: string }[]>`
    select feedback_id, external_id from tracker_links
    where integration_id = ${link.integrationId} and (feedback_id = ${link.feedbackId} or external_id = ${link.externalId})
    limit 1`;
  if (existing) {
    return { kind: 'taken', by: existing.feedback_id === link.feedbackId ? 'item' : 'issue', feedbackId: existing.feedback_id };
  }
  const [row] = await sql<{ id: string }[]>`
    insert into tracker_links (project_id, feedback_id, integration_id, external_id, issue_key, url, title, state, state_name, synced_status,
                               votes_line, votes_line_at)
    values (${link.projectId}, ${link.feedbackId}, ${link.integrationId}, ${link.externalId}, ${link.issueKey}, ${link.url},
            ${link.title.slice(0, 1000)}, ${link.state}, ${link.stateName}, ${link.syncedStatus},
            ${link.votesLine ?? null}, ${link.votesLine ? new Date() : null})
    on conflict do nothing
    returning id`;
  if (!row) return { kind: 'taken', by: 'item', feedbackId: link.feedbackId };
  return { kind: 'linked', link: (await findLink(sql, link.projectId, link.feedbackId, row.id)) as TrackerLinkRow };
}

/** Whether an item has linked issues in an enabled tracker: its votes then go out (votes.repo.ts). */
export async function hasActiveLinks(sql: SqlLike, feedbackId: string): Promise<boolean> {
  const [row] = await sql`
    select 1 from tracker_links l join integrations i on i.id = l.integration_id
    where l.feedback_id = ${feedbackId} and i.enabled
    limit 1`;
  return row !== undefined;
}

/** How many issues an integration has linked. */
export async function countLinks(sql: SqlLike, integrationId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from tracker_links where integration_id = ${integrationId}`;
  return row?.n ?? 0;
}

/** An item's linked issues, oldest link first. */
export async function listLinks(sql: SqlLike, projectId: string, feedbackId: string): Promise<TrackerLinkRow[]> {
  return sql<TrackerLinkRow[]>`
    select ${linkColumns(sql)}
    from tracker_links l join integrations i on i.id = l.integration_id
    where l.project_id = ${projectId} and l.feedback_id = ${feedbackId}
    order by l.created_at, l.id`;
}

export async function findLink(sql: SqlLike, projectId: string, feedbackId: string, id: string): Promise<TrackerLinkRow | null> {
  const [row] = await sql<TrackerLinkRow[]>`
    select ${linkColumns(sql)}
    from tracker_links l join integrations i on i.id = l.integration_id
    where l.id = ${id} and l.project_id = ${projectId} and l.feedback_id = ${feedbackId}`;
  return row ?? null;
}

/** Unlinks; the issue itself is left as it is. */
export async function deleteLink(sql: SqlLike, projectId: string, feedbackId: string, id: string): Promise<TrackerLinkRow | null> {
  const found = await findLink(sql, projectId, feedbackId, id);
  if (!found) return null;
  await sql`delete from tracker_links where id = ${id}`;
  return found;
}

/** The link of an issue in an integration, locked for the rest of the transaction. */
export async function lockLinkByIssue(sql: SqlLike, integrationId: string, externalId: string): Promise<TrackerLinkRow | null> {
  const [row] = await sql<TrackerLinkRow[]>`
    select ${linkColumns(sql)}
    from tracker_links l join integrations i on i.id = l.integration_id
    where l.integration_id = ${integrationId} and l.external_id = ${externalId}
    for update of l`;
  return row ?? null;
}

/** Records the issue's state as last seen or set, and the status of ours it stands for. */
export async function setLinkState(
  sql: SqlLike,
  id: string,
  state: { state: string; stateName: string; syncedStatus: FeedbackStatus | null },
): Promise<void> {
  await sql`
    update tracker_links set state = ${state.state}, state_name = ${state.stateName}, synced_status = ${state.syncedStatus}, updated_at = now()
    where id = ${id}`;
}

/** A link by its id alone (the workers' pushes name links), with what a push needs to decide. */
export type LinkForPush = TrackerLinkRow & { votes_line: string | null; votes_line_at: Date | null };

export async function findLinkForPush(sql: SqlLike, id: string): Promise<LinkForPush | null> {
  const [row] = await sql<LinkForPush[]>`
    select ${linkColumns(sql)}, l.votes_line, l.votes_line_at
    from tracker_links l join integrations i on i.id = l.integration_id
    where l.id = ${id}`;
  return row ?? null;
}

/** Records the votes line written into the issue's description. */
export async function setLinkVotesLine(sql: SqlLike, id: string, line: string): Promise<void> {
  await sql`update tracker_links set votes_line = ${line}, votes_line_at = now(), updated_at = now() where id = ${id}`;
}

// Inbound webhooks

/** What processing reads of a tracker's webhook (never the payload itself). */
export type InboundEvent =
  | { tracker: 'github'; action: 'closed' | 'reopened'; number: number; state: string; title: string }
  | {
      tracker: 'linear';
      action: 'update';
      issue_id: string;
      state_id: string;
      state_name: string;
      state_type: string | null;
      title: string;
    };

/** Records a delivery for processing; `duplicate` when its delivery id was recorded before (a redelivery). */
export async function recordInbound(
  sql: SqlLike,
  integrationId: string,
  deliveryId: string,
  event: InboundEvent | null,
): Promise<{ duplicate: boolean }> {
  const [row] = await sql<{ id: string }[]>`
    insert into tracker_inbound (integration_id, delivery_id, event, processed_at, outcome, detail)
    values (${integrationId}, ${deliveryId}, ${sql.json((event ?? {}) as never)},
            ${event === null ? sql`now()` : null}, ${event === null ? 'ignored' : null},
            ${event === null ? 'not an issue state change' : null})
    on conflict (integration_id, delivery_id) do nothing
    returning id`;
  return { duplicate: !row };
}

export type PendingInbound = { id: string; integration_id: string; project_id: string; kind: TrackerKind; plan: Plan; event: InboundEvent };

/**
 * Up to `limit` unprocessed deliveries, oldest first, locked for the transaction (`skip locked`:
 * several workers split them).
 */
export async function claimInbound(sql: SqlLike, limit: number): Promise<PendingInbound[]> {
  return sql<PendingInbound[]>`
    select t.id, t.integration_id, i.project_id, i.kind, a.plan, t.event
    from tracker_inbound t
    join integrations i on i.id = t.integration_id
    join projects p on p.id = i.project_id
    join accounts a on a.id = p.account_id
    where t.processed_at is null
    order by t.id
    limit ${limit}
    for update of t skip locked`;
}

export async function markInbound(sql: SqlLike, id: string, outcome: string, detail: string | null): Promise<void> {
  await sql`update tracker_inbound set processed_at = now(), outcome = ${outcome}, detail = ${detail} where id = ${id}`;
}

/**
 * Counts a failed attempt to apply a delivery; at `maxAttempts` it is set aside as `ignored` with
 * the error. Answers whether it was set aside.
 */
export async function failInbound(sql: SqlLike, id: string, error: string, maxAttempts: number): Promise<boolean> {
  const [row] = await sql<{ attempts: number }[]>`
    update tracker_inbound set attempts = attempts + 1 where id = ${id} and processed_at is null returning attempts`;
  if (!row || row.attempts < maxAttempts) return false;
  await markInbound(sql, id, 'ignored', `could not be applied (${row.attempts} attempts): ${error.slice(0, 300)}`);
  return true;
}

export type InboundRow = {
  id: string;
  delivery_id: string;
  received_at: Date;
  processed_at: Date | null;
  outcome: string | null;
  detail: string | null;
};

/** An integration's recent deliveries, newest first (the dashboard's "last webhooks"). */
export async function listInbound(sql: SqlLike, integrationId: string, limit: number): Promise<InboundRow[]> {
  return sql<InboundRow[]>`
    select id, delivery_id, received_at, processed_at, outcome, detail from tracker_inbound
    where integration_id = ${integrationId}
    order by id desc
    limit ${limit}`;
}

/** Deletes processed deliveries older than `days` (their ids dedupe redeliveries until then). */
export async function pruneInbound(sql: SqlLike, days: number, limit: number): Promise<number> {
  const deleted = await sql`
    delete from tracker_inbound where id in (
      select id from tracker_inbound
      where processed_at < now() - make_interval(days => ${days})
      order by id limit ${limit})`;
  return deleted.count;
}
