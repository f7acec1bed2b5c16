import { parseAtomFeed } from 'feedsmith';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The board's Atom feed, /board/<slug>/changelog.atom (issue 40): parsed by feedsmith, a maintained
 * feed parser from npm, as an Atom 1.0 feed with the published entries newest first, their
 * sanitized HTML, and nothing of drafts or scheduled entries; the text of a title with markup
 * stays text; a board that is not public has no feed.
 */

const server = useTestServer({ workers: false });
let project: TestProject;
let slug: string;

const owner = () => ({ bearer: project.account.adminToken });
const write = async (body: Record<string, unknown>, publish: boolean) => {
  const entry = (await server.request('POST', `/api/v1/projects/${project.id}/changelog`, { ...owner(), body })).body;
  if (publish) await server.request('POST', `/api/v1/projects/${project.id}/changelog/${entry.id}/publish`, owner());
  return entry as { id: string };
};

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro', name: 'Acme & Co <Notes>' });
  const settings = await server.request('PATCH', `/api/v1/projects/${project.id}`, { ...owner(), body: { boardPublic: true } });
  slug = settings.body.slug;
});

describe('GET /board/<slug>/changelog.atom', () => {
  it('is an Atom 1.0 feed of the published entries, newest first, with their sanitized HTML', async () => {
    const item = await createFeedback(server, project, { title: 'Dark mode' });
    const first = await write(
      { title: 'Tags & <b>filters</b>', body: 'Filter by **tag**. <img src=x onerror=alert(1)>', category: 'New' },
      true,
    );
    await write({ title: 'A draft', body: 'not yet' }, false);
    await write({ title: 'Later', body: 'soon', publishAt: '2031-01-01T00:00:00Z' }, false);
    const second = await write(
      { title: 'Dark mode', body: 'It is [here](https://docs.example/dark).', linkedFeedbackIds: [item.id] },
      true,
    );

    const response = await fetch(`${server.url}/board/${slug}/changelog.atom`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    const feed = parseAtomFeed(await response.text());
    expect(feed.title).toEqual({ type: 'text', value: "Acme & Co <Notes>: what's new" });
    expect(feed.links?.map((link) => link.rel)).toEqual(['self', 'alternate']);
    expect(feed.entries?.map((entry) => entry.id)).toEqual([`urn:uuid:${second.id}`, `urn:uuid:${first.id}`]);
    const [newest, oldest] = feed.entries ?? [];
    expect(newest?.content).toEqual({
      type: 'html',
      value: '<p>It is <a href="https://docs.example/dark" rel="noopener nofollow">here</a>.</p>',
    });
    expect(oldest?.title).toEqual({ type: 'text', value: 'Tags & <b>filters</b>' });
    expect(oldest?.content).toEqual({ type: 'html', value: '<p>Filter by <strong>tag</strong>. </p>' });
    expect(oldest?.categories?.map((category) => category.term)).toEqual(['New']);
    expect(Date.parse(newest?.published ?? '')).toBeGreaterThan(Date.now() - 120_000);
    for (const entry of feed.entries ?? []) expect(entry.updated).toMatch(/Z$/);
  });

  it('answers 404 for a board that is not public, and for an unknown slug', async () => {
    const hidden = await createProject(server, { plan: 'pro' });
    const { slug: hiddenSlug } = (await server.request('GET', `/api/v1/projects/${hidden.id}`, { bearer: hidden.account.adminToken })).body;
    expect((await fetch(`${server.url}/board/${hiddenSlug}/changelog.atom`)).status).toBe(404);
    expect((await fetch(`${server.url}/board/no-such-board/changelog.atom`)).status).toBe(404);
  });
});
