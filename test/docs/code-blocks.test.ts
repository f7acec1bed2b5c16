import { describe, expect, it } from 'vitest';
import { isWalkThrough, parseBlocks, testedBlocks } from './code-blocks.js';

/*
 * The documentation's code blocks are tests (issue 28): each shell or TypeScript/JavaScript block
 * of README.md, docs/*.md and sdk/README.md is run against a started service
 * (walkthrough.test.ts), or carries `<!-- not-runnable: <the reason> -->` on the line directly
 * before its fence. This file checks the markers, without a service; the runs are in
 * walkthrough.test.ts.
 */

describe('the documentation’s code blocks', () => {
  it('finds the blocks of README.md, every docs/*.md and sdk/README.md', () => {
    const { blocks } = testedBlocks();
    const files = new Set(blocks.map((block) => block.file));
    for (const file of ['README.md', 'docs/api-guide.md', 'sdk/README.md']) expect(files, file).toContain(file);
    expect(blocks.filter(isWalkThrough).length).toBeGreaterThan(5);
  });

  it('every not-runnable marker gives its reason and stands directly before the fence of a tested block', () => {
    expect(testedBlocks().problems).toEqual([]);
  });

  it('parses fences, markers and their problems as documented', () => {
    const markdown = [
      '## Walk-through',
      '```sh',
      'curl -s $B/feedbacks',
      '```',
      '<!-- not-runnable: needs Docker -->',
      '```bash',
      'docker compose up',
      '```',
      '- in a list:',
      '  ```ts',
      '  track("x");',
      '  ```',
      '<!-- not-runnable: -->',
      '```js',
      'x();',
      '```',
      '<!-- not-runnable: a marker on a json block marks nothing -->',
      '```json',
      '{}',
      '```',
      '<!-- not-runnable: a marker away from its fence -->',
      '',
      '```sh',
      'ls',
      '```',
    ].join('\n');
    const { blocks, problems } = parseBlocks('x.md', markdown);
    expect(blocks.map((block) => [block.lang, block.line, block.notRunnable, block.lines.join('\n')])).toEqual([
      ['sh', 2, undefined, 'curl -s $B/feedbacks'],
      ['bash', 6, 'needs Docker', 'docker compose up'],
      ['ts', 10, undefined, 'track("x");'],
      ['js', 14, '', 'x();'],
      ['json', 18, 'a marker on a json block marks nothing', '{}'],
      ['sh', 23, undefined, 'ls'],
    ]);
    expect(blocks[0]?.section).toBe('Walk-through');
    expect(problems).toEqual([
      'x.md:17: a not-runnable marker on a `json` block, which is never run',
      'x.md:21: a not-runnable marker must be on the line directly before a fence',
      'x.md:14: the not-runnable marker gives no reason',
    ]);
  });
});
