import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSql } from '../../src/oltp/db.js';
import { ChangelogScheduler } from '../../src/workers/changelog.scheduler.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The changelog (issue 40, docs/api-guide.md "Changelog"): every state and transition of an entry
 * through /projects/:id/changelog, what readers get from GET /changelog, and scheduled publishing
 * on a test clock, exactly once however many schedulers run at the same moment.
 */

// The service's own scheduler stays off: the test clock decides when entries are due.
const server = useTestServer({ workers: false });
let project: TestProject;
let other: TestProject;
let items: { id: string; title: string }[];

const owner = () => ({ bearer: project.account.adminToken });
const base = () => `/api/v1/projects/${project.id}/changelog`;
const create = (body: Record<string, unknown>) => server.request('POST', base(), { ...owner(), body });
const publicList = (apiKey = project.apiKey) => server.request('GET', '/api/v1/changelog', { apiKey });

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'pro' });
  items = [
    await createFeedback(server, project, { title: 'Dark mode' }),
    await createFeedback(server, project, { title: 'Export to CSV' }),
  ];
});

describe('changelog entries', () => {
  it('writes a draft with its Markdown rendered to sanitized HTML and its linked items in order', async () => {
    const written = await create({
      title: 'Dark mode is here',
      body: 'We **shipped** it. [Docs](https://docs.example) <script>alert(1)</script>',
      category: 'New',
      linked_feedback_ids: [items[1]?.id, items[0]?.id],
    });
    expect(written.status, JSON.stringify(written.body)).toBe(200);
    expect(written.body).toMatchObject({
      title: 'Dark mode is here',
      category: 'New',
      state: 'draft',
      publish_at: null,
      published_at: null,
      linked_feedback_ids: [items[1]?.id, items[0]?.id],
      linked_items: [
        { id: items[1]?.id, title: 'Export to CSV' },
        { id: items[0]?.id, title: 'Dark mode' },
      ],
    });
    expect(written.body.html).toBe(
      '<p>We <strong>shipped</strong> it. <a href="https://docs.example" rel="noopener nofollow">Docs</a> </p>',
    );
    // A draft is its owner's alone.
    expect((await publicList()).body.map((entry: { id: string }) => entry.id)).not.toContain(written.body.id);
  });

  it('refuses links to items of another project, twice-listed items, and bad fields, naming the field', async () => {
    const foreign = await createFeedback(server, other);
    const refused = await create({ title: 'x', body: 'y', linkedFeedbackIds: [foreign.id] });
    expect(refused.status).toBe(400);
    expect(refused.body.reason).toMatch(/^linkedFeedbackIds: not items of this project/);
    expect((await create({ title: 'x', body: 'y', linkedFeedbackIds: [items[0]?.id, items[0]?.id] })).status).toBe(400);
    expect((await create({ title: '', body: 'y' })).body.reason).toMatch(/^title: /);
    expect((await create({ title: 'x', body: 'y', publishAt: 'tomorrow' })).body.reason).toMatch(/^publishAt: /);
  });

  it('goes draft → scheduled → draft → published, and a published entry may be corrected but not rescheduled', async () => {
    const draft = (await create({ title: 'CSV export', body: 'Export your data.' })).body;
    const at = '2031-01-01T09:00:00Z';
    const scheduled = await server.request('PATCH', `${base()}/${draft.id}`, { ...owner(), body: { publish_at: at } });
    expect(scheduled.body).toMatchObject({ state: 'scheduled', publish_at: at, published_at: null });
    const back = await server.request('PATCH', `${base()}/${draft.id}`, { ...owner(), body: { publishAt: null } });
    expect(back.body).toMatchObject({ state: 'draft', publish_at: null });
    const published = await server.request('POST', `${base()}/${draft.id}/publish`, owner());
    expect(published.status).toBe(200);
    expect(published.body.state).toBe('published');
    expect(Date.parse(published.body.published_at)).toBeGreaterThan(Date.now() - 60_000);
    // Publishing again changes nothing.
    const again = await server.request('POST', `${base()}/${draft.id}/publish`, owner());
    expect(again.body.published_at).toBe(published.body.published_at);
    // A correction shows; a schedule no longer applies.
    const corrected = await server.request('PATCH', `${base()}/${draft.id}`, { ...owner(), body: { body: 'Export your data as _CSV_.' } });
    expect(corrected.body).toMatchObject({ state: 'published', html: '<p>Export your data as <em>CSV</em>.</p>' });
    const moved = await server.request('PATCH', `${base()}/${draft.id}`, { ...owner(), body: { publishAt: at } });
    expect(moved.status).toBe(409);
    // Readers get it, with only the public fields.
    const read = (await publicList()).body.find((entry: { id: string }) => entry.id === draft.id);
    expect(read).toEqual({
      id: draft.id,
      title: 'CSV export',
      html: '<p>Export your data as <em>CSV</em>.</p>',
      category: null,
      published_at: published.body.published_at,
      linked_items: [],
    });
  });

  it('lists, reads and deletes; another project’s entry is a 404', async () => {
    const entry = (await create({ title: 'To delete', body: 'x' })).body;
    expect((await server.request('GET', base(), owner())).body.map((e: { id: string }) => e.id)).toContain(entry.id);
    expect((await server.request('GET', `${base()}/${entry.id}`, owner())).body.title).toBe('To delete');
    const elsewhere = `/api/v1/projects/${other.id}/changelog/${entry.id}`;
    expect((await server.request('GET', elsewhere, { bearer: other.account.adminToken })).status).toBe(404);
    expect((await server.request('DELETE', `${base()}/${entry.id}`, owner())).status).toBe(200);
    expect((await server.request('GET', `${base()}/${entry.id}`, owner())).status).toBe(404);
    expect((await server.request('POST', `${base()}/${entry.id}/publish`, owner())).status).toBe(404);
  });

  it('GET /changelog: published entries only, newest first, for the API key of the project only', async () => {
    const first = (await create({ title: 'First', body: 'a' })).body;
    await server.request('POST', `${base()}/${first.id}/publish`, owner());
    const second = (await create({ title: 'Second', body: 'b', publishAt: '2031-02-01T00:00:00Z' })).body;
    const third = (await create({ title: 'Third', body: 'c', linkedFeedbackIds: [items[0]?.id] })).body;
    await server.request('POST', `${base()}/${third.id}/publish`, owner());
    const titles = (await publicList()).body.map((entry: { title: string }) => entry.title);
    expect(titles.indexOf('Third')).toBeLessThan(titles.indexOf('First'));
    expect(titles).not.toContain('Second');
    expect((await publicList()).body[0]).toMatchObject({ title: 'Third', linked_items: [{ id: items[0]?.id, title: 'Dark mode' }] });
    expect((await publicList(other.apiKey)).body).toEqual([]);
    expect((await server.request('GET', '/api/v1/changelog')).status).toBe(401);
    expect(second.state).toBe('scheduled');
  });
});

describe('scheduled publishing on a test clock', () => {
  it('publishes an entry when its time comes, at its publish_at, exactly once among concurrent schedulers', async () => {
    const at = new Date('2032-06-01T12:00:00Z');
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      ids.push((await create({ title: `Scheduled ${i}`, body: 'soon', publishAt: at.toISOString() })).body.id);
    }
    const logger = pino({ level: 'silent' });
    // Each scheduler on its own connection pool, as in separate worker processes.
    const pools = [createSql(serverDatabaseUrl(), { max: 2 }), createSql(serverDatabaseUrl(), { max: 2 })];
    try {
      let clock = new Date(at.getTime() - 60_000);
      const schedulers = pools.map((sql) => new ChangelogScheduler(sql, logger, () => clock));
      expect((await Promise.all(schedulers.map((s) => s.runOnce()))).flat().filter((id) => ids.includes(id))).toEqual([]);
      clock = new Date(at.getTime() + 1_000);
      const published = (await Promise.all(schedulers.map((s) => s.runOnce()))).flat().filter((id) => ids.includes(id));
      expect(published.sort()).toEqual([...ids].sort());
      expect((await Promise.all(schedulers.map((s) => s.runOnce()))).flat().filter((id) => ids.includes(id))).toEqual([]);
    } finally {
      await Promise.all(pools.map((sql) => sql.end()));
    }
    const entry = await server.request('GET', `${base()}/${ids[0]}`, owner());
    expect(entry.body).toMatchObject({ state: 'published', published_at: '2032-06-01T12:00:00Z' });
  });
});

/** The database the test server uses (its services hold the URL in their config). */
function serverDatabaseUrl(): string {
  return server.services.config.databaseUrl as string;
}
