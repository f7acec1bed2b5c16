import { describe, expect, it } from 'vitest';
import { renderChangelogHtml } from '../../src/core/changelog-html.js';

/*
 * The changelog's Markdown rendering (issue 40): an XSS corpus, each payload in the body an owner
 * (or whoever holds a token) could write, must come out without script, event handler, dangerous
 * URL, frame, form, style or image; what an entry needs (formatting, lists, links) survives, and
 * every link carries rel="noopener nofollow".
 */

const CORPUS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.example/x.js></SCRIPT>',
  '<img src=x onerror=alert(1)>',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href="java\tscript:alert(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '[x](javascript:alert(1))',
  '[x](JAVASCRIPT:alert(1))',
  '[x](data:text/html,<script>alert(1)</script>)',
  '![x](javascript:alert(1))',
  '![x](https://tracker.example/pixel.gif)',
  '<p onclick="alert(1)">click</p>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<style>body{display:none}</style>',
  '<form action="https://evil.example"><input name=x></form>',
  '<button formaction="javascript:alert(1)">x</button>',
  '<details open ontoggle=alert(1)>',
  '<body onload=alert(1)>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="https://evil.example/">',
  '<link rel=stylesheet href=https://evil.example/x.css>',
  '<a href="https://ok.example" onmouseover="alert(1)">x</a>',
  '<a href="//evil.example">x</a>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<template><script>alert(1)</script></template>',
  '<textarea><script>alert(1)</script></textarea>',
  '<<script>script>alert(1)<</script>/script>',
  '<scr<script>ipt>alert(1)</scr</script>ipt>',
  '`<script>alert(1)</script>`',
  '```html\n<script>alert(1)</script>\n```',
  '<a href="https://ok.example" target="_blank">x</a>',
];

/** What no rendering may hold: a tag that runs or loads, an event handler, a dangerous scheme. */
function dangers(html: string): string[] {
  const found: string[] = [];
  if (
    /<\s*(script|iframe|object|embed|img|svg|math|style|form|input|button|meta|base|link|template|textarea|noscript|details|body)\b/i.test(
      html,
    )
  )
    found.push('tag');
  if (/\son[a-z]+\s*=/i.test(html)) found.push('event handler');
  if (/(href|src|action|formaction)\s*=\s*["']?\s*(javascript|vbscript|data):/i.test(html)) found.push('scheme');
  if (/\sstyle\s*=/i.test(html)) found.push('style attribute');
  if (/href\s*=\s*["']?\/\//i.test(html)) found.push('protocol-relative link');
  if (/\starget\s*=/i.test(html)) found.push('target');
  return found;
}

describe('the changelog’s HTML', () => {
  it('the danger check itself finds each kind of payload (it can fail)', () => {
    expect(dangers('<script>x</script>')).toEqual(['tag']);
    expect(dangers('<p onclick="x">')).toEqual(['event handler']);
    expect(dangers('<a href="javascript:x">')).toEqual(['scheme']);
  });

  for (const payload of CORPUS) {
    it(`renders ${JSON.stringify(payload).slice(0, 70)} without anything that runs`, () => {
      const html = renderChangelogHtml(`Before ${payload} after`);
      expect(dangers(html), html).toEqual([]);
      for (const [, rel] of html.matchAll(/<a\b[^>]*?\brel="([^"]*)"/g)) expect(rel).toBe('noopener nofollow');
      expect((html.match(/<a\b/g) ?? []).length).toBe((html.match(/rel="noopener nofollow"/g) ?? []).length);
    });
  }

  it('keeps what an entry needs: headings below the title, emphasis, lists, code, quotes, tables, safe links', () => {
    const html = renderChangelogHtml(
      [
        '# Dark mode is here',
        '',
        'We **shipped** it, _finally_. ~~Soon~~ Now.',
        '',
        '- Settings → Appearance',
        '- `prefers-color-scheme` is followed',
        '',
        '> Thanks to everyone who voted.',
        '',
        '| Before | After |',
        '|---|---|',
        '| light | dark |',
        '',
        'Read [the docs](https://docs.example/dark) or [mail us](mailto:team@example.com).',
      ].join('\n'),
    );
    expect(html).toContain('<h2>Dark mode is here</h2>');
    expect(html).toContain('<strong>shipped</strong>');
    expect(html).toContain('<em>finally</em>');
    expect(html).toContain('<del>Soon</del>');
    expect(html).toContain('<li><code>prefers-color-scheme</code> is followed</li>');
    expect(html).toContain('<blockquote>');
    expect(html).toContain('<td>dark</td>');
    expect(html).toContain('<a href="https://docs.example/dark" rel="noopener nofollow">the docs</a>');
    expect(html).toContain('<a href="mailto:team@example.com" rel="noopener nofollow">mail us</a>');
  });

  it('keeps the text of a payload shown as code, escaped', () => {
    expect(renderChangelogHtml('`<script>alert(1)</script>`')).toBe('<p><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></p>');
  });
});
