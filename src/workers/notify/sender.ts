import { digestUnsubscribeUrl, unsubscribeUrl } from '../../core/unsubscribe-link.js';
import type { ClaimedDelivery } from '../../oltp/deliveries.repo.js';
import {
  type AlertNotificationType,
  type AlertPayload,
  type ChangelogPayload,
  type DigestPayload,
  isAlertPayload,
  isChangelogPayload,
  isDigestPayload,
} from '../../oltp/notification-payload.js';
import type { OutboundDeps } from '../trackers/outbound.js';
import { runTrackerDelivery } from '../trackers/tracker-delivery.js';
import { alertDiscordMessage, alertEmail, alertSlackMessage, alertWebhookBody, digestEmail } from './alert-message.js';
import { changelogDiscordMessage, changelogEmail, changelogSlackMessage, changelogWebhookBody, entryUrl } from './changelog-message.js';
import { discordMessage } from './discord.js';
import { emailContent } from './email.js';
import { DeliveryError } from './errors.js';
import { postJson } from './http-post.js';
import type { Mailer } from './mailer.js';
import { slackMessage } from './slack.js';
import { DELIVERY_ID_HEADER, USER_AGENT, webhookBody, webhookHeaders } from './webhook.js';

export type SenderDeps = {
  mailer: Mailer;
  publicUrl: string;
  timeoutMs: number;
  allowPrivateWebhooks: boolean;
  /** The issue trackers' calls (channels `github`, `linear`); absent, their deliveries wait and retry. */
  trackers?: OutboundDeps | undefined;
};

/**
 * Makes one attempt at one delivery: an email, a Slack or Discord message, or a signed webhook.
 * Resolves when the recipient accepted it; throws a DeliveryError otherwise.
 */
export async function sendDelivery(deps: SenderDeps, delivery: ClaimedDelivery): Promise<void> {
  const { type, payload } = delivery;
  if (delivery.channel === 'github' || delivery.channel === 'linear') return sendToTracker(deps, delivery);
  if (isChangelogPayload(payload)) return sendChangelog(deps, delivery, payload);
  if (isAlertPayload(payload)) return sendAlert(deps, delivery, payload);
  if (isDigestPayload(payload)) return sendDigest(deps, delivery, payload);
  if (delivery.channel === 'email') {
    const link = delivery.unsubscribe_token ? unsubscribeUrl(deps.publicUrl, delivery.unsubscribe_token) : null;
    const content = emailContent(delivery.project_name, type, payload, link);
    // Awaited to the end, never raced against a timer: an attempt given up on while the SMTP send
    // went on would be retried and the first send could still arrive (two emails). The mailer
    // bounds the send itself (each SMTP step, and the whole send) and closes its connection.
    await deps.mailer.send({ id: delivery.id, to: delivery.recipient, ...content, unsubscribeUrl: link ?? undefined });
    return;
  }
  const integration = delivery.integration;
  if (!integration) throw new DeliveryError('the integration was deleted', true);
  if (!integration.enabled) throw new DeliveryError('the integration is disabled', true);
  const post = { timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivateWebhooks };
  const common = { 'user-agent': USER_AGENT, [DELIVERY_ID_HEADER]: delivery.id };
  switch (delivery.channel) {
    case 'slack':
      await postJson(integration.url, JSON.stringify(slackMessage(delivery.project_name, type, payload)), common, post);
      return;
    case 'discord':
      await postJson(integration.url, JSON.stringify(discordMessage(delivery.project_name, type, payload)), common, post);
      return;
    case 'webhook': {
      const raw = JSON.stringify(webhookBody(type, delivery.project_id, payload, new Date()));
      await postJson(integration.url, raw, webhookHeaders(delivery.id, type, raw, integration.secret), post);
      return;
    }
  }
}

/**
 * One delivery to an item's linked issue (docs/integrations.md "Out"): the issue follows the
 * item's status, or its votes line the votes, or a new item gets its issue (`auto_create`) (src/workers/trackers/tracker-delivery.ts decides and
 * calls). A rate limit's wait is honoured, a votes update within the minute is put off without
 * counting as an attempt, a refused token fails for good (the integration then needs attention).
 */
async function sendToTracker(deps: SenderDeps, delivery: ClaimedDelivery): Promise<void> {
  const integration = delivery.integration;
  if (!integration) throw new DeliveryError('the integration was deleted', true);
  if (!integration.enabled) throw new DeliveryError('the integration is disabled', true);
  const type = delivery.type;
  if (type !== 'feedback.status_changed' && type !== 'feedback.votes_changed' && type !== 'feedback.created') {
    throw new DeliveryError(`an issue tracker takes no ${type}`, true);
  }
  if (!deps.trackers) throw new DeliveryError('this process has no tracker calls configured', false);
  const request =
    type === 'feedback.created'
      ? { type, feedbackId: delivery.recipient, integrationId: integration.id }
      : { type, linkId: delivery.recipient };
  const outcome = await runTrackerDelivery(deps.trackers, request);
  if (outcome.kind === 'done') return;
  if (outcome.kind === 'never') throw new DeliveryError(outcome.reason, true);
  throw new DeliveryError(outcome.reason, false, { retryAfterMs: outcome.delayMs ?? undefined, deferred: outcome.deferred });
}

/** One delivery of a `changelog.published` notification (changelog-message.ts says what each channel gets). */
async function sendChangelog(deps: SenderDeps, delivery: ClaimedDelivery, payload: ChangelogPayload): Promise<void> {
  const link = entryUrl(deps.publicUrl, delivery.board_slug, payload.entry.id);
  if (delivery.channel === 'email') {
    const unsubscribe = delivery.unsubscribe_token ? unsubscribeUrl(deps.publicUrl, delivery.unsubscribe_token) : null;
    const content = changelogEmail(delivery.project_name, payload, delivery.followed_item_ids ?? [], { unsubscribe, entry: link });
    // Awaited to the end, as every email (sendDelivery above).
    await deps.mailer.send({ id: delivery.id, to: delivery.recipient, ...content, unsubscribeUrl: unsubscribe ?? undefined });
    return;
  }
  const integration = delivery.integration;
  if (!integration) throw new DeliveryError('the integration was deleted', true);
  if (!integration.enabled) throw new DeliveryError('the integration is disabled', true);
  const post = { timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivateWebhooks };
  const common = { 'user-agent': USER_AGENT, [DELIVERY_ID_HEADER]: delivery.id };
  switch (delivery.channel) {
    case 'slack':
      await postJson(integration.url, JSON.stringify(changelogSlackMessage(delivery.project_name, payload, link)), common, post);
      return;
    case 'discord':
      await postJson(integration.url, JSON.stringify(changelogDiscordMessage(delivery.project_name, payload, link)), common, post);
      return;
    case 'webhook': {
      const raw = JSON.stringify(changelogWebhookBody(delivery.project_id, payload, link, new Date()));
      await postJson(integration.url, raw, webhookHeaders(delivery.id, delivery.type, raw, integration.secret), post);
      return;
    }
  }
}

/** One delivery of an alert's change of state or test (alert-message.ts says what each channel gets). */
async function sendAlert(deps: SenderDeps, delivery: ClaimedDelivery, payload: AlertPayload): Promise<void> {
  const message = payload.alert_message;
  if (delivery.channel === 'email') {
    // Awaited to the end, as every email (sendDelivery above).
    await deps.mailer.send({ id: delivery.id, to: delivery.recipient, ...alertEmail(delivery.project_name, message, deps.publicUrl) });
    return;
  }
  const integration = delivery.integration;
  if (!integration) throw new DeliveryError('the integration was deleted', true);
  if (!integration.enabled) throw new DeliveryError('the integration is disabled', true);
  const post = { timeoutMs: deps.timeoutMs, allowPrivate: deps.allowPrivateWebhooks };
  const common = { 'user-agent': USER_AGENT, [DELIVERY_ID_HEADER]: delivery.id };
  switch (delivery.channel) {
    case 'slack':
      await postJson(integration.url, JSON.stringify(alertSlackMessage(delivery.project_name, message, deps.publicUrl)), common, post);
      return;
    case 'discord':
      await postJson(integration.url, JSON.stringify(alertDiscordMessage(delivery.project_name, message, deps.publicUrl)), common, post);
      return;
    case 'webhook': {
      const type = delivery.type as AlertNotificationType;
      const raw = JSON.stringify(alertWebhookBody(type, delivery.project_id, message, deps.publicUrl, new Date()));
      await postJson(integration.url, raw, webhookHeaders(delivery.id, type, raw, integration.secret), post);
      return;
    }
  }
}

/** One weekly digest email, with its recipient's one-click unsubscribe link. */
async function sendDigest(deps: SenderDeps, delivery: ClaimedDelivery, payload: DigestPayload): Promise<void> {
  if (delivery.channel !== 'email' || !delivery.unsubscribe_token) throw new DeliveryError('a digest goes by email, with its link', true);
  const link = digestUnsubscribeUrl(deps.publicUrl, delivery.unsubscribe_token);
  await deps.mailer.send({ id: delivery.id, to: delivery.recipient, ...digestEmail(payload, deps.publicUrl, link), unsubscribeUrl: link });
}
