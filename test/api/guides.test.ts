import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/server.js';

/*
 * The guides served by the service, rendered with their screenshots (issue 39): the dashboard's
 * "Connect a tool" panel and the widget settings link here instead of to raw Markdown.
 */

const server = useTestServer({ workers: false });

describe('GET /docs/guides/:name', () => {
  it('renders the widget guide as HTML, its screenshots served, no mention of the repository’s source files', async () => {
    const r = await fetch(`${server.url}/docs/guides/widget`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await r.text();
    expect(html).toMatch(/<h1 id="[^"]+">/);
    const images = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(images.length).toBeGreaterThan(0);
    for (const src of images) {
      expect(src).toMatch(/^\/docs\/guides\/screenshots\/[a-z0-9-]+\.png$/);
      const image = await fetch(`${server.url}${src}`);
      expect([image.status, image.headers.get('content-type')], src).toEqual([200, 'image/png']);
    }
    expect(html).not.toContain('src/api/');
    expect(html).not.toMatch(/\]\(|```/); // no Markdown left raw
  });

  it('serves the ClickHouse interface guide, its links to other guides on the service', async () => {
    const html = await (await fetch(`${server.url}/docs/guides/clickhouse-interface`)).text();
    expect(html).toContain('DbGate');
    expect(html).not.toMatch(/href="[^"]*\.md/);
  });

  it('404 for an unknown guide or screenshot, and for a path that leaves the folder', async () => {
    for (const p of ['/docs/guides/nope', '/docs/guides/screenshots/nope.png', '/docs/guides/screenshots/..%2F..%2Fpackage.json']) {
      const r = await server.request('GET', p, { skipOpenApiCheck: 'a path that leaves the folder is not a documented request' });
      expect(r.status, p).toBe(404);
    }
  });
});
