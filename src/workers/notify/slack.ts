import type { FeedbackPayload, NotificationType } from '../../oltp/notification-payload.js';
import { clip, details, headline } from './summary.js';

/** Slack mrkdwn: &, < and > must be escaped, or user text could forge links and @-mentions. */
const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** An incoming-webhook message (https://api.slack.com/messaging/webhooks): text, one section. */
export function slackMessage(projectName: string, type: NotificationType, payload: FeedbackPayload) {
  const title = `*${escapeMrkdwn(projectName)}*: ${escapeMrkdwn(headline(type, payload))}`;
  const lines = details(type, payload).map((line) => escapeMrkdwn(clip(line, 1000)));
  const text = clip([title, ...lines].join('\n'), 2900);
  return {
    text,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }],
  };
}
