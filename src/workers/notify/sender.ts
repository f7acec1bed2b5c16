import { unsubscribeUrl } from '../../core/unsubscribe-link.js';
import type { ClaimedDelivery } from '../../oltp/deliveries.repo.js';
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
};

/**
 * Makes one attempt at one delivery: an email, a Slack or Discord message, or a signed webhook.
 * Resolves when the recipient accepted it; throws a DeliveryError otherwise.
 */
export async function sendDelivery(deps: SenderDeps, delivery: ClaimedDelivery): Promise<void> {
  const { type, payload } = delivery;
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
