import { Marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

/*
 * A changelog entry's Markdown, rendered to the HTML every reader gets (issue 40): `marked`
 * renders, `sanitize-html` keeps only what an entry needs. No script, style, frame, form or
 * image (an image is a tracking pixel in an email and a request the board's CSP would refuse), no
 * attribute but a link's `href`, and only http, https and mailto links, each given
 * rel="noopener nofollow" (the owner's links are not endorsed for search engines, and a page it
 * opens gets no handle on ours). Raw HTML in the Markdown goes through the same filter.
 */

const markdown = new Marked({ gfm: true, async: false });

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'h2',
  'h3',
  'h4',
  'strong',
  'em',
  'del',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: { a: ['href', 'rel'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  // Content of these is dropped with the tag; other unknown tags keep their text.
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'iframe', 'object', 'embed', 'svg', 'math', 'template'],
  transformTags: {
    // The entry's title is the page's heading: the body's headings start one level below.
    h1: 'h2',
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener nofollow' } }),
  },
};

/** The sanitized HTML of an entry's Markdown body. */
export function renderChangelogHtml(body: string): string {
  const raw = markdown.parse(body) as string;
  return sanitizeHtml(raw, SANITIZE).trim();
}
