import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The documentation's relative links work for someone who has only this repository: every link
 * of README.md and docs/*.md that is not a web or mail address points to a file inside the
 * repository, and every #anchor into a markdown file names one of its headings.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EXTERNAL = /^(?:https?:|mailto:)/i;

/** The markdown files whose links are checked, relative to the repository root. */
function documentationFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

/** The text outside fenced code blocks, line by line (a `#` in a shell block is no heading). */
function proseLines(markdown: string): string[] {
  const lines: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker[0] === fence[0])) {
      fence = fence === undefined ? marker : undefined;
      continue;
    }
    if (fence === undefined) lines.push(line);
  }
  return lines;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading keeps its text
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every anchor a markdown file defines: its headings' (numbered when repeated) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading !== undefined) {
      const slug = slugOf(heading);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      anchors.add(count === 0 ? slug : `${slug}-${count}`);
    }
    for (const match of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] as string);
  }
  return anchors;
}

/** Link targets of a markdown file: inline links and images, and reference definitions. */
function linksOf(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(markdown)) {
    const text = line.replace(/(`+)[\s\S]*?\1/g, ''); // code spans are not links
    for (const match of text.matchAll(/!?\[[^\]]*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g)) {
      targets.push((match[1] as string).replace(/^<|>$/g, ''));
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/.exec(text)?.[1];
    if (definition) targets.push(definition.replace(/^<|>$/g, ''));
  }
  return targets;
}

type Problem = { file: string; link: string; problem: string };

/** What is wrong with each relative link of `file` (a path relative to the repository root). */
function checkLinks(file: string): Problem[] {
  const problems: Problem[] = [];
  const source = readFileSync(path.join(ROOT, file), 'utf8');
  for (const link of linksOf(source)) {
    if (EXTERNAL.test(link)) continue;
    const hash = link.indexOf('#');
    const target = decodeURIComponent(hash === -1 ? link : link.slice(0, hash));
    const anchor = hash === -1 ? undefined : decodeURIComponent(link.slice(hash + 1));
    // A leading slash is the repository root, as on the code host; otherwise relative to the file.
    const resolved =
      target === ''
        ? path.join(ROOT, file)
        : path.resolve(target.startsWith('/') ? ROOT : path.dirname(path.join(ROOT, file)), target.replace(/^\//, ''));
    const relative = path.relative(ROOT, resolved);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      problems.push({ file, link, problem: 'points outside the repository' });
      continue;
    }
    if (!existsSync(resolved)) {
      problems.push({ file, link, problem: `${relative} does not exist` });
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      problems.push({ file, link, problem: `${relative} has no heading with the anchor #${anchor}` });
    }
  }
  return problems;
}

describe('documentation links', () => {
  it('finds the README and the docs folder', () => {
    const files = documentationFiles();
    expect(files).toContain('README.md');
    expect(files.length).toBeGreaterThan(1);
  });

  it.each(documentationFiles())('%s: every relative link and anchor resolves inside the repository', (file) => {
    expect(checkLinks(file)).toEqual([]);
  });

  it('computes anchors and links as the code host does', () => {
    const markdown = [
      '# Production (docker compose)',
      '### 7. An integration and its deliveries (Pro)',
      '## `RATE_LIMIT_API` and [limits](x.md)',
      '## Notes',
      '## Notes',
      '```sh',
      '# not a heading [not](a-link.md)',
      '```',
      'See [a](docs/a.md#b "title"), ![img](<pic one.png>), `[code](not-a-link.md)` and [c](#notes-1).',
      '[ref]: ../outside.md',
    ].join('\n');
    expect([...anchorsOf(markdown)]).toEqual([
      'production-docker-compose',
      '7-an-integration-and-its-deliveries-pro',
      'rate_limit_api-and-limits',
      'notes',
      'notes-1',
    ]);
    expect(linksOf(markdown)).toEqual(['x.md', 'docs/a.md#b', 'pic one.png', '#notes-1', '../outside.md']);
  });
});
