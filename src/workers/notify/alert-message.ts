import { type AlertMessage, alertHeadline, alertLines, dashboardUrl } from '../../core/alert-message.js';
import { renderDigest } from '../../core/digest.js';
import { escapeHtml } from '../../core/html.js';
import { apiTime } from '../../core/time.js';
import type { AlertNotificationType, DigestPayload } from '../../oltp/notification-payload.js';
import type { EmailContent } from './email.js';
import { clip } from './summary.js';

/*
 * What an alert's notification says on each channel (docs/notifications.md "Alerts"): the
 * headline and lines of src/core/alert-message.ts (the value, the interval before, the condition,
 * the interval, the dashboard link), and the weekly digest's email (src/core/digest.ts renders it).
 */

/** The email of an alert: to the owner, and on Team to the members. */
export function alertEmail(projectName: string, message: AlertMessage, publicUrl: string): EmailContent {
  const headline = alertHeadline(message);
  const lines = alertLines(message, publicUrl);
  const subject = `[${projectName}] ${headline}`.replace(/[\r\n]+/g, ' ');
  const footer = `You receive this because the alert “${message.alert.name}” of ${projectName} emails its changes.`;
  const text = [headline, '', ...lines, '', '--', footer].join('\n');
  const link = dashboardUrl(message, publicUrl);
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4">',
    `<h2 style="font-size: 1.1em">${escapeHtml(headline)}</h2>`,
    ...lines.slice(0, -1).map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p><a href="${escapeHtml(link)}">Open the alerts in the dashboard</a></p>`,
    `<hr><p style="color: #666; font-size: 0.9em">${escapeHtml(footer)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/** Slack mrkdwn: &, < and > escaped, as for every message (slack.ts). */
const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function alertSlackMessage(projectName: string, message: AlertMessage, publicUrl: string) {
  const text = clip(
    [`*${escapeMrkdwn(projectName)}*: ${escapeMrkdwn(alertHeadline(message))}`, ...alertLines(message, publicUrl).map(escapeMrkdwn)].join(
      '\n',
    ),
    2900,
  );
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

export function alertDiscordMessage(projectName: string, message: AlertMessage, publicUrl: string) {
  const value = (n: number | null) => (n === null ? 'no value' : String(n));
  return {
    content: clip(`${projectName}: ${alertHeadline(message)}`, 2000),
    embeds: [
      {
        title: clip(message.alert.name, 256),
        description: clip(alertLines(message, publicUrl).join('\n'), 4096),
        url: dashboardUrl(message, publicUrl),
        fields: [
          { name: 'Value', value: value(message.value), inline: true },
          { name: 'Interval before', value: value(message.previous_value), inline: true },
        ],
        footer: { text: clip(`${projectName} · ${message.alert.id}`, 2048) },
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The body of a signed webhook: the type, the project, the alert, the interval and its values, the link. */
export function alertWebhookBody(type: AlertNotificationType, projectId: string, message: AlertMessage, publicUrl: string, sentAt: Date) {
  return {
    type,
    project_id: projectId,
    alert: message.alert,
    interval_start: message.interval_start,
    interval_end: message.interval_end,
    value: message.value,
    previous_value: message.previous_value,
    change_percent: message.change_percent,
    condition_met: message.condition_met,
    test: message.change === 'test',
    dashboard_url: dashboardUrl(message, publicUrl),
    sent_at: apiTime(sentAt),
  };
}

/** The weekly digest's email to one recipient, with its one-click unsubscribe link. */
export function digestEmail(payload: DigestPayload, publicUrl: string, unsubscribeUrl: string): EmailContent {
  return renderDigest(payload.digest, { publicUrl, unsubscribeUrl });
}
