import { apiTime } from '../../core/time.js';
import type { ChangelogEntryRow } from '../../oltp/changelog.repo.js';

/*
 * The public board's changelog as an Atom 1.0 feed (RFC 4287), /board/<slug>/changelog.atom: the
 * published entries, newest first, each with its sanitized HTML as escaped `html` content. Written
 * by hand (a few elements, every text escaped); test/api/changelog-feed.test.ts parses it with a
 * maintained feed parser.
 */

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => XML_ESCAPES[c] as string);

export function changelogAtom(input: { boardUrl: string; feedUrl: string; projectName: string; entries: ChangelogEntryRow[] }): string {
  const { boardUrl, feedUrl, projectName, entries } = input;
  const newest = entries[0]?.updated_at ?? new Date(0);
  const items = entries.map(
    (entry) => `  <entry>
    <id>urn:uuid:${entry.id}</id>
    <title type="text">${escapeXml(entry.title)}</title>
    <link rel="alternate" type="text/html" href="${escapeXml(`${boardUrl}/changelog#${entry.id}`)}"/>
    <published>${apiTime(entry.published_at as Date)}</published>
    <updated>${apiTime(entry.updated_at)}</updated>
${entry.category ? `    <category term="${escapeXml(entry.category)}"/>\n` : ''}    <content type="html">${escapeXml(entry.html)}</content>
  </entry>`,
  );
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${escapeXml(feedUrl)}</id>
  <title type="text">${escapeXml(`${projectName}: what's new`)}</title>
  <link rel="self" type="application/atom+xml" href="${escapeXml(feedUrl)}"/>
  <link rel="alternate" type="text/html" href="${escapeXml(`${boardUrl}/changelog`)}"/>
  <updated>${apiTime(newest)}</updated>
  <author><name>${escapeXml(projectName)}</name></author>
${items.join('\n')}${items.length ? '\n' : ''}</feed>
`;
}
