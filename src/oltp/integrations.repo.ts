import type { SqlLike } from './db.js';

export const INTEGRATION_KINDS = ['slack', 'discord', 'webhook', 'github', 'linear'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];
/** The kinds that receive notification messages; the others are issue trackers (trackers.repo.ts). */
export const MESSAGE_KINDS = ['slack', 'discord', 'webhook'] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** Notification types an integration may subscribe to (the `notifications.type` values). */
export const INTEGRATION_EVENTS = ['feedback.created', 'feedback.status_changed', 'changelog.published'] as const;
export type IntegrationEvent = (typeof INTEGRATION_EVENTS)[number];

/** An integration as the API sees it: whether it has a secret, never the secret itself. */
export type IntegrationRow = {
  id: string;
  project_id: string;
  kind: IntegrationKind;
  url: string;
  /** null: every notification type. */
  events: IntegrationEvent[] | null;
  enabled: boolean;
  has_secret: boolean;
  created_at: Date;
  updated_at: Date;
};

/** The columns of an IntegrationRow: the secret itself is never read back. */
const integrationColumns = (sql: SqlLike) =>
  sql`id, project_id, kind, url, events, enabled, secret is not null as has_secret, created_at, updated_at`;

export async function createIntegration(
  sql: SqlLike,
  input: {
    projectId: string;
    kind: IntegrationKind;
    url: string;
    secret: string | null;
    events: IntegrationEvent[] | null;
    enabled: boolean;
  },
): Promise<IntegrationRow> {
  const [integration] = await sql<IntegrationRow[]>`
    insert into integrations (project_id, kind, url, secret, events, enabled)
    values (${input.projectId}, ${input.kind}, ${input.url}, ${input.secret}, ${input.events}::text[], ${input.enabled})
    returning ${integrationColumns(sql)}`;
  return integration as IntegrationRow;
}

export async function listIntegrations(sql: SqlLike, projectId: string): Promise<IntegrationRow[]> {
  return sql<IntegrationRow[]>`
    select ${integrationColumns(sql)}
    from integrations
    where project_id = ${projectId}
    order by created_at, id`;
}

export async function findIntegration(sql: SqlLike, projectId: string, id: string): Promise<IntegrationRow | null> {
  const [integration] = await sql<IntegrationRow[]>`
    select ${integrationColumns(sql)}
    from integrations
    where id = ${id} and project_id = ${projectId}`;
  return integration ?? null;
}

/**
 * Changes the given fields of a project's integration. `events: null` is a change (to every
 * type); an absent field keeps its value.
 */
export async function updateIntegration(
  sql: SqlLike,
  projectId: string,
  id: string,
  changes: {
    url?: string | undefined;
    secret?: string | undefined;
    events?: IntegrationEvent[] | null | undefined;
    enabled?: boolean | undefined;
  },
): Promise<IntegrationRow | null> {
  const setEvents = changes.events !== undefined;
  const [integration] = await sql<IntegrationRow[]>`
    update integrations set
      url = coalesce(${changes.url ?? null}, url),
      secret = coalesce(${changes.secret ?? null}, secret),
      events = case when ${setEvents}::boolean then ${changes.events ?? null}::text[] else events end,
      enabled = coalesce(${changes.enabled ?? null}::boolean, enabled),
      updated_at = now()
    where id = ${id} and project_id = ${projectId}
    returning ${integrationColumns(sql)}`;
  return integration ?? null;
}

export async function deleteIntegration(sql: SqlLike, projectId: string, id: string): Promise<IntegrationRow | null> {
  const [integration] = await sql<IntegrationRow[]>`
    delete from integrations
    where id = ${id} and project_id = ${projectId}
    returning ${integrationColumns(sql)}`;
  return integration ?? null;
}
