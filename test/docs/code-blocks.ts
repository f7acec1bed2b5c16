import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The code blocks of the documentation that are tests (docs/development.md, "The documentation's
 * code blocks"): every ```sh, ```bash, ```shell, ```ts, ```typescript, ```js and ```javascript block
 * of README.md, docs/*.md and sdk/README.md, found here, so a new document is covered as soon as
 * it is added. A block either runs against a started service (test/docs/walkthrough.test.ts) or is
 * marked, on the line directly before its fence, `<!-- not-runnable: <the reason> -->`.
 */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const SHELL_LANGS = ['sh', 'bash', 'shell'];
export const SCRIPT_LANGS = ['ts', 'typescript', 'js', 'javascript'];

export type CodeBlock = {
  /** Relative to the repository root. */
  file: string;
  /** The fence's line, 1-based. */
  line: number;
  lang: string;
  lines: string[];
  /** The reason of its `<!-- not-runnable: … -->` marker; '' when the marker gives none. */
  notRunnable?: string;
  /** The `## ` section it is in (its heading's text). */
  section: string;
};

/** A marker line: `<!-- not-runnable: <reason> -->`. */
const MARKER = /^\s*<!--\s*not-runnable\s*(?::\s*(.*?))?\s*-->\s*$/;

/** The documents whose blocks are tests, relative to the root: README.md, docs/*.md, sdk/README.md. */
export function documentFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs, 'sdk/README.md'];
}

export type Parsed = { blocks: CodeBlock[]; problems: string[] };

/**
 * The fenced blocks of one markdown text (fences of ``` or ~~~, indented ones in lists too), with
 * their markers, and the problems of the markers: one without a reason, and one that is not
 * directly followed by the fence of a block it could mark.
 */
export function parseBlocks(file: string, markdown: string): Parsed {
  const blocks: CodeBlock[] = [];
  const problems: string[] = [];
  const lines = markdown.split('\n');
  let section = '';
  let open: { fence: string; block: CodeBlock } | undefined;
  for (const [index, line] of lines.entries()) {
    if (open) {
      if (new RegExp(`^\\s*${open.fence[0] === '`' ? '`' : '~'}{${open.fence.length},}\\s*$`).test(line)) {
        blocks.push(open.block);
        open = undefined;
      } else open.block.lines.push(line);
      continue;
    }
    const heading = /^##\s+(.*)$/.exec(line)?.[1];
    if (heading !== undefined) section = heading.trim();
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (fence) {
      const previous = lines[index - 1] ?? '';
      const marker = MARKER.exec(previous);
      const block: CodeBlock = { file, line: index + 1, lang: (fence[3] ?? '').toLowerCase(), lines: [], section };
      if (marker) block.notRunnable = (marker[1] ?? '').trim();
      open = { fence: fence[2] as string, block };
      continue;
    }
    if (MARKER.test(line)) {
      const next = lines[index + 1] ?? '';
      const lang = (/^\s*(?:`{3,}|~{3,})\s*([\w-]*)/.exec(next)?.[1] ?? '').toLowerCase();
      if (!/^\s*(?:`{3,}|~{3,})/.test(next))
        problems.push(`${file}:${index + 1}: a not-runnable marker must be on the line directly before a fence`);
      else if (![...SHELL_LANGS, ...SCRIPT_LANGS].includes(lang))
        problems.push(`${file}:${index + 1}: a not-runnable marker on a \`${lang || 'plain'}\` block, which is never run`);
    }
  }
  if (open) problems.push(`${file}:${open.block.line}: a fence that is never closed`);
  for (const block of blocks) {
    if (block.notRunnable === '') problems.push(`${file}:${block.line}: the not-runnable marker gives no reason`);
  }
  // Indented blocks (in a list) lose the indentation of their fence.
  for (const block of blocks) {
    const indent = Math.min(...block.lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)?.[0].length ?? 0));
    if (Number.isFinite(indent) && indent > 0) block.lines = block.lines.map((l) => l.slice(indent));
  }
  return { blocks, problems };
}

/** Every block of every document whose language is one of the tested ones. */
export function testedBlocks(): Parsed {
  const all: Parsed = { blocks: [], problems: [] };
  for (const file of documentFiles()) {
    const parsed = parseBlocks(file, readFileSync(path.join(ROOT, file), 'utf8'));
    all.blocks.push(...parsed.blocks.filter((block) => [...SHELL_LANGS, ...SCRIPT_LANGS].includes(block.lang)));
    all.problems.push(...parsed.problems);
  }
  return all;
}

/** The API guide's walk-through: run as one script by walkthrough.test.ts, before every other block. */
export function isWalkThrough(block: CodeBlock): boolean {
  return block.file === 'docs/api-guide.md' && block.section === 'Walk-through';
}
