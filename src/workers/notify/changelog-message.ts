import { convert } from 'html-to-text';
import { escapeHtml } from '../../core/html.js';
import { apiTime } from '../../core/time.js';
import type { ChangelogPayload, NotifiedFeedback } from '../../oltp/notification-payload.js';
import type { EmailContent } from './email.js';
import { clip, STATUS_LABELS } from './summary.js';

/*
 * What a `changelog.published` notification says on each channel (docs/notifications.md
 * "Changelog entries"): the entry (its title, its sanitized HTML, a plain-text rendering of it),
 * its linked items, and for an email the items its recipient asked for.
 */

/** The entry's HTML as plain text (paragraphs, lists, links with their address), for text parts and chat. */
export function changelogText(html: string): string {
  return convert(html, {
    wordwrap: 100,
    selectors: [
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable' },
    ],
  }).trim();
}

/** The board's page of the entry, when the board is public. */
export const entryUrl = (publicUrl: string, boardSlug: string | null, entryId: string) =>
  boardSlug ? `${publicUrl}/board/${encodeURIComponent(boardSlug)}/changelog#${entryId}` : null;

const headline = (payload: ChangelogPayload) => `What’s new: ${payload.entry.title}`;

const itemLine = (item: NotifiedFeedback) => `${item.title} (${STATUS_LABELS[item.status] ?? item.status})`;

/**
 * The email to one address: the entry, the items it asked for (voted for or submitted, and still
 * follows), a link to the board when it is public, and the link that unsubscribes it from them.
 */
export function changelogEmail(
  projectName: string,
  payload: ChangelogPayload,
  followedIds: string[],
  links: { unsubscribe: string | null; entry: string | null },
): EmailContent {
  const { entry } = payload;
  const followed = followedIds
    .map((id) => payload.items.find((item) => item.id === id))
    .filter((item): item is NotifiedFeedback => item !== undefined);
  const subject = `[${projectName}] ${headline(payload)}`.replace(/[\r\n]+/g, ' ');
  const intro = `${projectName} published an update about something you asked for.`;
  const footer = `You receive this because you asked to hear about status changes of ${followed.length > 1 ? 'these items' : 'this item'}.`;
  const text = [
    intro,
    '',
    entry.title,
    ...(entry.category ? [`[${entry.category}]`] : []),
    '',
    changelogText(entry.html),
    '',
    'You asked for:',
    ...followed.map((item) => `- ${itemLine(item)}`),
    ...(links.entry ? ['', `Read it on the board: ${links.entry}`] : []),
    '',
    '--',
    footer,
    ...(links.unsubscribe ? [`Unsubscribe: ${links.unsubscribe}`] : []),
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4">',
    `<p>${escapeHtml(intro)}</p>`,
    `<h2 style="font-size: 1.2em">${escapeHtml(entry.title)}</h2>`,
    ...(entry.category ? [`<p style="color: #666">${escapeHtml(entry.category)}</p>`] : []),
    // Sanitized when the entry was written (src/core/changelog-html.ts): safe as it is.
    `<div>${entry.html}</div>`,
    '<p>You asked for:</p>',
    `<ul>${followed.map((item) => `<li>${escapeHtml(itemLine(item))}</li>`).join('')}</ul>`,
    ...(links.entry ? [`<p><a href="${escapeHtml(links.entry)}">Read it on the board</a></p>`] : []),
    `<hr><p style="color: #666; font-size: 0.9em">${escapeHtml(footer)}`,
    ...(links.unsubscribe ? [` <a href="${escapeHtml(links.unsubscribe)}">Unsubscribe</a>`] : []),
    '</p></body></html>',
  ].join('\n');
  return { subject, text, html };
}

/** Slack mrkdwn: &, < and > escaped, so entry text cannot forge links or @-mentions. */
const escapeMrkdwn = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function changelogSlackMessage(projectName: string, payload: ChangelogPayload, link: string | null) {
  const lines = [
    `*${escapeMrkdwn(projectName)}*: ${escapeMrkdwn(headline(payload))}`,
    escapeMrkdwn(clip(changelogText(payload.entry.html), 1500)),
    ...(payload.items.length > 0 ? [`Ships: ${escapeMrkdwn(clip(payload.items.map(itemLine).join(', '), 1000))}`] : []),
    // A link Slack renders: the URL is ours (PUBLIC_URL and a slug), the label fixed.
    ...(link ? [`<${link}|Read it on the board>`] : []),
  ];
  const text = clip(lines.join('\n'), 2900);
  return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
}

/** One embed; `allowed_mentions` with no parse types, so "@everyone" in an entry pings nobody. */
export function changelogDiscordMessage(projectName: string, payload: ChangelogPayload, link: string | null) {
  return {
    content: clip(`${projectName}: ${headline(payload)}`, 2000),
    embeds: [
      {
        title: clip(payload.entry.title, 256),
        description: clip(changelogText(payload.entry.html), 4096),
        ...(link ? { url: link } : {}),
        fields: payload.items.length > 0 ? [{ name: 'Ships', value: clip(payload.items.map(itemLine).join('\n'), 1024) }] : [],
        footer: { text: clip(`${projectName} · changelog ${payload.entry.id}`, 2048) },
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/**
 * The body of a generic webhook for an entry: the entry (its HTML and its text, its board page
 * when public), its linked items exactly as the API answers them, and those this publish
 * completed.
 */
export function changelogWebhookBody(projectId: string, payload: ChangelogPayload, link: string | null, sentAt: Date) {
  return {
    type: 'changelog.published' as const,
    project_id: projectId,
    entry: { ...payload.entry, text: changelogText(payload.entry.html), url: link },
    items: payload.items,
    completed_feedback_ids: payload.completed_feedback_ids,
    sent_at: apiTime(sentAt),
  };
}
