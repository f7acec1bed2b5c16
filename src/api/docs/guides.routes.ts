import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked } from 'marked';
import { z } from 'zod';
import { escapeHtml } from '../../core/html.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { describe, error, ROOT_SERVER } from '../shared/building-blocks.js';

/*
 * The project's guides, served by the service itself and rendered (issue 39): the dashboard links
 * here (its "Connect a tool" panel, the widget settings), so a reader gets the guide of the version
 * that runs, with its screenshots, and no raw Markdown. Only the files listed in GUIDES are served,
 * and only the screenshots of docs/screenshots.
 */

/** Where the repository's files are, from this module (src/api/docs/). */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The served guides: their name under /docs/guides/ and their file. */
export const GUIDES = {
  'clickhouse-interface': 'docs/clickhouse-interface.md',
  'project-sql': 'docs/project-sql.md',
  widget: 'docs/widget.md',
  'api-guide': 'docs/api-guide.md',
  sdk: 'sdk/README.md',
} as const;

export const GUIDES_PATH = '/docs/guides';

type GuideName = keyof typeof GUIDES;
const NAMES = Object.keys(GUIDES) as GuideName[];

/** A screenshot's file name: letters, digits and dashes, then .png (nothing that could leave the folder). */
const SCREENSHOT = /^[a-z0-9][a-z0-9-]{0,100}\.png$/;

const GUIDE_CSP = ["default-src 'none'", "img-src 'self'", "style-src 'unsafe-inline'", "base-uri 'none'", "frame-ancestors 'none'"].join(
  '; ',
);

/** `[text](other.md#part)` → the served guide; a screenshot → its served path; a repository file → plain text. */
function linkOf(href: string, from: string): string | null {
  if (/^[a-z]+:/i.test(href) || href.startsWith('#')) return href;
  const [file = '', anchor] = href.split('#');
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), file));
  const served = NAMES.find((name) => GUIDES[name] === target);
  if (served) return `${GUIDES_PATH}/${served}${anchor ? `#${anchor}` : ''}`;
  const shot = /^docs\/screenshots\/([^/]+)$/.exec(target)?.[1];
  if (shot && SCREENSHOT.test(shot)) return `${GUIDES_PATH}/screenshots/${shot}`;
  return null;
}

/** The Markdown renderer of one guide: links and images through linkOf, headings with ids. */
function renderer(from: string): Marked {
  const marked = new Marked();
  marked.use({
    gfm: true,
    renderer: {
      link({ href, tokens }) {
        const text = this.parser.parseInline(tokens);
        const target = linkOf(href, from);
        return target === null ? text : `<a href="${escapeHtml(target)}">${text}</a>`;
      },
      image({ href, text }) {
        const target = linkOf(href, from);
        return target === null ? escapeHtml(text) : `<img src="${escapeHtml(target)}" alt="${escapeHtml(text)}" loading="lazy">`;
      },
      heading({ tokens, depth }) {
        const text = this.parser.parseInline(tokens);
        const id = text
          .replace(/<[^>]+>/g, '')
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .trim()
          .replace(/ +/g, '-');
        return `<h${depth} id="${id}">${text}</h${depth}>\n`;
      },
      // Raw HTML in a guide is shown as text: the pages hold no markup of their own.
      html({ text }) {
        return escapeHtml(text);
      },
    },
  });
  return marked;
}

/** Mentions of the repository's source files, `(src/…)` in code: the reader of a served guide has none. */
const SOURCE_MENTION = / ?\(`(?:src|test|web|scripts|bench)\/[^`]+`(?:, `[^`]+`)*\)/g;

const STYLE = `body{font:16px/1.55 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
pre{background:#f4f5f7;padding:.8rem;overflow:auto;border-radius:6px}code{font-size:.92em}
table{border-collapse:collapse}td,th{border:1px solid #d0d4da;padding:.3rem .5rem;vertical-align:top}
img{max-width:100%;border:1px solid #e2e5e9;border-radius:6px}nav a{margin-right:1rem}`;

const pages = new Map<GuideName, Promise<string>>();

/** The rendered page of a guide, made once per process (the files do not change while it runs). */
function page(name: GuideName): Promise<string> {
  let made = pages.get(name);
  if (!made) {
    made = readFile(path.join(ROOT, GUIDES[name]), 'utf8').then((markdown) => {
      const title = /^# (.+)$/m.exec(markdown)?.[1] ?? name;
      const body = renderer(GUIDES[name]).parse(markdown.replace(SOURCE_MENTION, '')) as string;
      const nav = NAMES.map((other) => `<a href="${GUIDES_PATH}/${other}">${escapeHtml(other)}</a>`).join('');
      return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><nav>${nav}</nav>${body}</body></html>`;
    });
    made.catch(() => pages.delete(name));
    pages.set(name, made);
  }
  return made;
}

export const guideRoutes = [
  defineRoute({
    method: 'get',
    path: `${GUIDES_PATH}/screenshots/:file`,
    mount: 'root',
    auth: 'public',
    operationId: 'guideScreenshot',
    tags: ['Service'],
    summary: 'A screenshot of the guides',
    servers: ROOT_SERVER,
    params: z.object({ file: describe(z.string().regex(SCREENSHOT, 'no such screenshot'), 'File name (`name.png`).') }),
    responses: {
      200: { description: 'The PNG image.', content: { 'image/png': { schema: z.string().meta({ format: 'binary' }) } } },
      400: error('A path segment no store can hold (NUL), refused before any lookup.'),
      404: error('No such screenshot.'),
    },
    handler: async (ctx, _deps, { params }) => {
      try {
        ctx.body = await readFile(path.join(ROOT, 'docs', 'screenshots', params.file));
      } catch {
        throw notFound('no such screenshot');
      }
      ctx.type = 'image/png';
      ctx.set('Cache-Control', 'public, max-age=3600');
    },
  }),
  defineRoute({
    method: 'get',
    path: `${GUIDES_PATH}/:name`,
    mount: 'root',
    auth: 'public',
    operationId: 'guidePage',
    tags: ['Service'],
    summary: 'A guide of the service, rendered',
    description: `The guides the dashboard links to: ${NAMES.map((name) => `\`${name}\``).join(', ')}. HTML, with their screenshots; links between them stay on this service.`,
    servers: ROOT_SERVER,
    params: z.object({ name: describe(z.enum(NAMES, { error: 'no such guide' }), 'The guide.') }),
    responses: {
      200: { description: 'HTML page.', content: { 'text/html': { schema: z.string() } } },
      400: error('A path segment no store can hold (NUL), refused before any lookup.'),
      404: error('No such guide.'),
    },
    handler: async (ctx, _deps, { params }) => {
      ctx.type = 'text/html; charset=utf-8';
      ctx.set('Content-Security-Policy', GUIDE_CSP);
      ctx.set('Cache-Control', 'no-cache');
      ctx.body = await page(params.name);
    },
  }),
];
