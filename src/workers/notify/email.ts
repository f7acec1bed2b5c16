import { escapeHtml } from '../../core/html.js';
import type { FeedbackPayload, NotificationType } from '../../oltp/notification-payload.js';
import { CATEGORY_LABELS, details, headline } from './summary.js';

export type EmailContent = { subject: string; text: string; html: string };

/**
 * Subject, plain text and HTML of one email. Members get new items; voters and the submitter get
 * status changes, each with an unsubscribe link of their own.
 */
export function emailContent(
  projectName: string,
  type: NotificationType,
  payload: FeedbackPayload,
  unsubscribe: string | null,
): EmailContent {
  const f = payload.feedback;
  const subject = `[${projectName}] ${headline(type, payload)}`.replace(/[\r\n]+/g, ' ');
  const intro =
    type === 'feedback.created'
      ? `A new ${(CATEGORY_LABELS[f.category] ?? f.category).toLowerCase()} was submitted to ${projectName}.`
      : `An item you follow in ${projectName} changed.`;
  const lines = [headline(type, payload), ...details(type, payload)];
  const footer =
    type === 'feedback.created'
      ? `You receive this as a member of ${projectName}.`
      : 'You receive this because you asked to hear about status changes of this item.';
  const text = [
    intro,
    '',
    ...lines,
    '',
    `Votes: ${f.vote_count}`,
    '',
    '--',
    footer,
    ...(unsubscribe ? [`Unsubscribe: ${unsubscribe}`] : []),
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4">',
    `<p>${escapeHtml(intro)}</p>`,
    `<h2 style="font-size: 1.1em">${escapeHtml(lines[0] ?? '')}</h2>`,
    ...lines.slice(1).map((line) => `<p style="white-space: pre-wrap">${escapeHtml(line)}</p>`),
    `<p>Votes: ${f.vote_count}</p>`,
    `<hr><p style="color: #666; font-size: 0.9em">${escapeHtml(footer)}`,
    ...(unsubscribe ? [` <a href="${escapeHtml(unsubscribe)}">Unsubscribe</a>`] : []),
    '</p></body></html>',
  ].join('\n');
  return { subject, text, html };
}
