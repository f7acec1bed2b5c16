import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Similar requests (issue 40, docs/api-guide.md "Similar requests"): GET /feedbacks/similar for the
 * client app while a user types, GET /projects/:id/feedbacks/:feedbackId/similar for owners. What
 * is matched (stemmed words, typos through trigrams), what is left out (merged, rejected, held
 * anonymous submissions of others) and the short-text rule.
 */

const server = useTestServer({ workers: false, env: { RATE_LIMIT_ANONYMOUS: '200/h' } });
let project: TestProject;
let publishableKey: string;
const ids: Record<string, string> = {};

const similar = (q: string, options: { apiKey?: string; headers?: Record<string, string> } = {}) =>
  server.request('GET', `/api/v1/feedbacks/similar?q=${encodeURIComponent(q)}`, {
    apiKey: options.apiKey ?? project.apiKey,
    headers: options.headers,
  });
const titles = (body: { title: string }[]) => body.map((item) => item.title);

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
  const owner = { bearer: project.account.adminToken };
  const items = {
    dark: ['Dark mode', 'The white background hurts my eyes at night.'],
    export: ['Exporting tasks to CSV', 'I need my tasks in a spreadsheet.'],
    widget: ['Home screen widget', 'Show today on the home screen.'],
    merged: ['Dark theme please', 'A darker colour scheme.'],
    rejected: ['Dark mode for the printer', 'Print in dark colours.'],
    other: ['Pomodoro timer', 'A focus timer with breaks.'],
  } as const;
  for (const [name, [title, description]] of Object.entries(items)) {
    ids[name] = (await createFeedback(server, project, { title, description })).id;
  }
  expect(
    (await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${ids.merged}/merge`, { ...owner, body: { intoId: ids.dark } }))
      .status,
  ).toBe(200);
  expect(
    (await server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${ids.rejected}`, { ...owner, body: { status: 'rejected' } }))
      .status,
  ).toBe(200);
  const secret = await server.request('POST', `/api/v1/projects/${project.id}/identity-secret`, owner);
  publishableKey = secret.body.publishable_key;
  const settings = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
    ...owner,
    body: { boardPublic: true, anonymousFeedback: true },
  });
  expect(settings.status).toBe(200);
});

describe('GET /feedbacks/similar', () => {
  it('answers the items whose words match, stemmed, best first, with id, title, status, vote_count and a score from 0 to 1', async () => {
    const answer = await similar('export my task list');
    expect(answer.status).toBe(200);
    expect(answer.body[0]).toEqual({
      id: ids.export,
      title: 'Exporting tasks to CSV',
      status: 'pending',
      vote_count: 1,
      created_at: expect.any(String),
      score: expect.any(Number),
    });
    for (const item of answer.body) expect(item.score).toBeGreaterThan(0);
    for (const item of answer.body) expect(item.score).toBeLessThanOrEqual(1);
    const scores = answer.body.map((item: { score: number }) => item.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('matches misspelt and half-typed titles through trigrams', async () => {
    // Neither "mdoe" nor "darkmode" nor "widgt" is a word of any item: full-text search alone finds nothing.
    expect(titles((await similar('dark mdoe')).body)[0]).toBe('Dark mode');
    expect(titles((await similar('darkmode')).body)[0]).toBe('Dark mode');
    expect(titles((await similar('homescreen widgt')).body)[0]).toBe('Home screen widget');
  });

  it('searches the description too, below the title', async () => {
    expect(titles((await similar('focus breaks')).body)).toEqual(['Pomodoro timer']);
  });

  it('leaves out merged sources and rejected items', async () => {
    const found = titles((await similar('dark theme mode')).body);
    expect(found).toContain('Dark mode');
    expect(found).not.toContain('Dark theme please');
    expect(found).not.toContain('Dark mode for the printer');
  });

  it('answers an empty list for a text shorter than 3 characters, and for one nothing resembles', async () => {
    for (const q of ['', 'da', '  d ']) expect((await similar(q)).body).toEqual([]);
    expect((await similar('xylophone zebra quartz')).body).toEqual([]);
  });

  it('refuses a missing or overlong q with a 400 naming it', async () => {
    const missing = await server.request('GET', '/api/v1/feedbacks/similar', { apiKey: project.apiKey });
    expect(missing.status).toBe(400);
    expect(missing.body.reason).toMatch(/^q: /);
    expect((await similar('x'.repeat(501))).status).toBe(400);
  });

  it('needs a key, and takes the publishable one', async () => {
    expect((await server.request('GET', '/api/v1/feedbacks/similar?q=dark')).status).toBe(401);
    expect(titles((await similar('dark mode', { apiKey: publishableKey })).body)).toContain('Dark mode');
  });

  it('shows a held anonymous submission to its author only', async () => {
    const visitor = `anon-${randomUUID()}`;
    const held = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: publishableKey,
      headers: { 'X-User-Id': visitor },
      body: { title: 'Quokka stickers in the app', description: 'Cute quokka stickers.', category: 'other', userId: visitor },
    });
    expect(held.status, JSON.stringify(held.body)).toBe(200);
    expect((await similar('quokka stickers', { apiKey: publishableKey })).body).toEqual([]);
    expect((await similar('quokka stickers')).body).toEqual([]);
    const own = await similar('quokka stickers', { apiKey: publishableKey, headers: { 'X-User-Id': visitor } });
    expect(titles(own.body)).toEqual(['Quokka stickers in the app']);
  });

  it('is charged to the key’s API budget like the other API-key routes (RateLimit-* headers)', async () => {
    const first = await similar('dark mode');
    const second = await similar('dark mode');
    expect(first.headers.get('ratelimit-limit')).not.toBeNull();
    expect(Number(second.headers.get('ratelimit-remaining'))).toBeLessThan(Number(first.headers.get('ratelimit-remaining')));
  });
});

describe('GET /projects/:id/feedbacks/:feedbackId/similar', () => {
  it('lists an item’s likely duplicates, never the item itself', async () => {
    const copy = await createFeedback(server, project, { title: 'Dark mode pls', description: 'Night theme, my eyes hurt.' });
    const answer = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks/${copy.id}/similar`, {
      bearer: project.account.adminToken,
    });
    expect(answer.status).toBe(200);
    expect(answer.body[0].id).toBe(ids.dark);
    expect(answer.body.map((item: { id: string }) => item.id)).not.toContain(copy.id);
  });

  it('is the owner’s: 404 for an item of another project, 401 without the token', async () => {
    const other = await createProject(server, { plan: 'pro' });
    const path = `/api/v1/projects/${other.id}/feedbacks/${ids.dark}/similar`;
    expect((await server.request('GET', path, { bearer: other.account.adminToken })).status).toBe(404);
    expect((await server.request('GET', `/api/v1/projects/${project.id}/feedbacks/${ids.dark}/similar`)).status).toBe(401);
  });
});
