import type { FeedbackPayload, NotificationType } from '../../oltp/notification-payload.js';
import { clip, details, headline } from './summary.js';

/**
 * A Discord webhook message (https://discord.com/developers/docs/resources/webhook): one embed.
 * `allowed_mentions` with no parse types: user text saying @everyone pings nobody.
 */
export function discordMessage(projectName: string, type: NotificationType, payload: FeedbackPayload) {
  return {
    content: clip(`${projectName}: ${headline(type, payload)}`, 2000),
    embeds: [
      {
        title: clip(payload.feedback.title, 256),
        description: clip(details(type, payload).join('\n\n'), 4096),
        fields: [
          { name: 'Status', value: payload.feedback.status, inline: true },
          { name: 'Votes', value: String(payload.feedback.vote_count), inline: true },
        ],
        footer: { text: clip(`${projectName} · ${payload.feedback.id}`, 2048) },
      },
    ],
    allowed_mentions: { parse: [] },
  };
}
