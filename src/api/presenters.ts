import type { Account } from '../oltp/accounts.repo.js';
import type { CommentRow } from '../oltp/comments.repo.js';
import type { DeliveryRow } from '../oltp/deliveries.repo.js';
import { feedbackResource } from '../oltp/feedback.row.js';
import type { IntegrationRow } from '../oltp/integrations.repo.js';
import type { MemberRow } from '../oltp/members.repo.js';
import type { Project } from '../oltp/projects.repo.js';
import type { SdkUserRow } from '../oltp/sdk-users.repo.js';

/** Feedback, SPEC 2.1: the same form an item takes in notifications (oltp/feedback.row.ts). */
export const presentFeedback = feedbackResource;

/** Comment, SPEC 2.5. */
export function presentComment(row: CommentRow) {
  return {
    id: row.id,
    content: row.content,
    user_id: row.user_id,
    is_admin: row.is_admin,
    created_at: row.created_at.toISOString(),
  };
}

/** SDK user, SPEC 2.6. */
export function presentSdkUser(row: SdkUserRow) {
  return {
    id: row.id,
    user_id: row.user_id,
    mrr: row.mrr,
    first_seen_at: row.first_seen_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
  };
}

/** Project record (DESIGN 3). The API key appears only in the responses that create it. */
export function presentProject(row: Project, apiKey?: string) {
  return {
    id: row.id,
    name: row.name,
    ...(apiKey === undefined ? {} : { api_key: apiKey }),
    archived: row.archived,
    suspended: row.suspended,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Account record; the admin token appears only when the account is created. */
export function presentAccount(row: Account, adminToken?: string) {
  return {
    id: row.id,
    email: row.email,
    plan: row.plan,
    ...(adminToken === undefined ? {} : { admin_token: adminToken }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Team member of a project; the member's admin token appears only when the member is added. */
export function presentMember(row: MemberRow, adminToken?: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    email: row.email,
    created_at: row.created_at.toISOString(),
    ...(adminToken === undefined ? {} : { admin_token: adminToken }),
  };
}

/**
 * Integration of a project. Its secret is never shown, except the one the server generated for a
 * new webhook, in the response that creates it.
 */
export function presentIntegration(row: IntegrationRow, generatedSecret?: string) {
  return {
    id: row.id,
    project_id: row.project_id,
    kind: row.kind,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    has_secret: row.has_secret,
    ...(generatedSecret === undefined ? {} : { secret: generatedSecret }),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** A delivery of a notification to one recipient (README "Notifications"). */
export function presentDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    notification_id: String(row.notification_id),
    type: row.type,
    channel: row.channel,
    recipient: row.recipient,
    integration_id: row.integration_id,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
