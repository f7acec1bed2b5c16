import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { type HttpResponse, useTestServer } from '../helpers/server.js';

/*
 * The unsubscribe link of status-change emails (README "Emails"): GET only shows what the link is
 * for (mail scanners and prefetchers open every link), POST unsubscribes: the page's form, and the
 * RFC 8058 one-click POST of mail clients, whatever body they send. Real HTTP, real Postgres; the
 * flags read here are the ones the dispatcher reads (notifications.repo.ts).
 */

const PUBLIC_URL = 'https://feedback.example.com';

const server = useTestServer({ env: { PUBLIC_URL } });

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const path = (token: string) => `/api/v1/unsubscribe/${token}`;

/** An item with a submitter address and one opted-in voter; the tokens of both links. */
async function subscribedItem(title = 'Dark mode') {
  const project: TestProject = await createProject(server, { plan: 'team' });
  const tag = randomUUID().slice(0, 8);
  const voter = `Voter-${tag}@Example.com`;
  const submitter = `submitter-${tag}@example.com`;
  const feedback = await createFeedback(server, project, { title, userEmail: submitter });
  const voted = await server.request('POST', `/api/v1/feedbacks/${feedback.id}/votes`, {
    apiKey: project.apiKey,
    body: { userId: 'v1', email: voter, notifyStatusChange: true },
  });
  expect(voted.status, JSON.stringify(voted.body)).toBe(200);
  const [row] = await server.sql<{ vote_token: string; submitter_token: string }[]>`
    select v.unsubscribe_token::text as vote_token, f.submitter_unsubscribe_token::text as submitter_token
    from votes v join feedbacks f on f.id = v.feedback_id
    where v.feedback_id = ${feedback.id} and v.user_id = 'v1'`;
  return {
    feedbackId: feedback.id as string,
    voter: voter.toLowerCase(),
    submitter,
    voteToken: row!.vote_token,
    submitterToken: row!.submitter_token,
  };
}

/** The flags the dispatcher reads: does the voter / the submitter still get status-change emails? */
async function flags(feedbackId: string) {
  const [row] = await server.sql<{ voter: boolean; submitter: boolean }[]>`
    select (select notify_status_change from votes where feedback_id = ${feedbackId} and user_id = 'v1') as voter,
           submitter_notify as submitter
    from feedbacks where id = ${feedbackId}`;
  return row;
}

function expectNotFound(response: HttpResponse) {
  expect(response.status).toBe(404);
  expect(response.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
}

describe('GET /unsubscribe/:token (the link in the email)', () => {
  it('changes nothing: a browser, a scanner and a JSON client may open it any number of times', async () => {
    const item = await subscribedItem();
    for (const headers of [HTML, {}, { accept: '*/*' }, { accept: 'application/json' }, HTML]) {
      expect((await server.request('GET', path(item.voteToken), { headers })).status).toBe(200);
    }
    const head = await fetch(`${server.url}${path(item.voteToken)}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await flags(item.feedbackId)).toEqual({ voter: true, submitter: true });
  });

  it('a browser gets a page naming the item and the address, with a form that POSTs to the same URL', async () => {
    const item = await subscribedItem('<script>alert("x")</script> & "quotes"');
    const page = await server.request('GET', path(item.voteToken), { headers: HTML });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = page.body as string;
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;');
    expect(html).not.toContain('<script>');
    expect(html).toContain(item.voter);
    expect(html).toContain(`<form method="post" action="${PUBLIC_URL}${path(item.voteToken)}">`);
    expect(html).toMatch(/<button type="submit">Unsubscribe<\/button><\/form>/);
  });

  it('other clients get JSON: the item, its title, the address and whether it is still subscribed', async () => {
    const item = await subscribedItem();
    const response = await server.request('GET', path(item.submitterToken));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      feedback_id: item.feedbackId,
      title: 'Dark mode',
      email: item.submitter,
      subscribed: true,
      items: [{ id: item.feedbackId, title: 'Dark mode', subscribed: true }],
    });
  });

  it('404 in the SPEC 7.1 body for an unknown or malformed token', async () => {
    expectNotFound(await server.request('GET', path(randomUUID())));
    expectNotFound(await server.request('GET', path(randomUUID()), { headers: HTML }));
    expectNotFound(await server.request('GET', path('not-a-token')));
  });
});

describe('POST /unsubscribe/:token (the page’s button, RFC 8058 one-click)', () => {
  it('a form POST (application/x-www-form-urlencoded, List-Unsubscribe=One-Click) unsubscribes the address', async () => {
    const item = await subscribedItem();
    const response = await server.request('POST', path(item.voteToken), {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'List-Unsubscribe=One-Click',
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ unsubscribed: true, feedback_id: item.feedbackId, feedback_ids: [item.feedbackId] });
    expect(await flags(item.feedbackId)).toEqual({ voter: false, submitter: true });
    // The link now says so, and offers no button.
    expect((await server.request('GET', path(item.voteToken))).body).toMatchObject({ subscribed: false });
    const page = (await server.request('GET', path(item.voteToken), { headers: HTML })).body as string;
    expect(page).toContain('no longer sent to');
    expect(page).not.toContain('<form');
  });

  it('is idempotent and needs no body: empty, empty form, multipart, or mislabelled as JSON', async () => {
    const item = await subscribedItem();
    const boundary = 'x-boundary-1234';
    const bodies: { headers?: Record<string, string>; rawBody?: string }[] = [
      {},
      { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: '' },
      {
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        rawBody: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
      },
      { headers: { 'content-type': 'application/json' }, rawBody: 'List-Unsubscribe=One-Click' },
    ];
    for (const options of bodies) {
      const response = await server.request('POST', path(item.submitterToken), options);
      expect(response.status, JSON.stringify(options)).toBe(200);
      expect(response.body).toEqual({ unsubscribed: true, feedback_id: item.feedbackId, feedback_ids: [item.feedbackId] });
    }
    expect(await flags(item.feedbackId)).toEqual({ voter: true, submitter: false });
  });

  it('a browser’s form POST gets a confirmation page', async () => {
    const item = await subscribedItem('Tabs & <spaces>');
    const response = await server.request('POST', path(item.voteToken), {
      headers: { ...HTML, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'List-Unsubscribe=One-Click',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.body).toContain('“Tabs &amp; &lt;spaces&gt;” will no longer be sent to');
    expect(await flags(item.feedbackId)).toEqual({ voter: false, submitter: true });
  });

  it('404 in the SPEC 7.1 body for an unknown or malformed token', async () => {
    expectNotFound(await server.request('POST', path(randomUUID())));
    expectNotFound(
      await server.request('POST', path(randomUUID()), {
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        rawBody: 'List-Unsubscribe=One-Click',
      }),
    );
    expectNotFound(await server.request('POST', path('not-a-token')));
  });
});
