import { describe, expect, it } from 'vitest';
import { until } from '../helpers/eventually.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { type Delivery, listDeliveries, settledDeliveries } from '../helpers/notifications.js';
import { startHttpReceiver } from '../helpers/receivers.js';
import { redisAvailable } from '../helpers/redis.js';
import { useTestServer } from '../helpers/server.js';
import { type GithubStandin, type LinearStandin, startGithubStandin, startLinearStandin } from '../helpers/trackers.js';

/*
 * Both ways through the service's own machinery (issue 42, docs/integrations.md): a status change
 * or a vote becomes a notification, its deliveries to the item's linked issues go out with
 * retries, Retry-After and the delivery log, and the trackers' webhooks come back in. Every call
 * to the stand-ins of GitHub and Linear (test/helpers/trackers.ts) is counted: what is in step
 * already is never sent, so nothing loops.
 */

const withRedis = await redisAvailable();
const ENV = { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_BACKOFF_MS: '50', DELIVERY_TIMEOUT_MS: '3000' };

/** The deliveries to linked issues, oldest first (the log lists the newest first). */
const trackerDeliveries = (deliveries: Delivery[]) =>
  deliveries
    .filter((d) => d.channel === 'github' || d.channel === 'linear')
    .sort((a, b) => Number(a.notification_id) - Number(b.notification_id));

describe.each([
  { mode: 'in-process (poller over deliveries)', redis: false },
  { mode: 'BullMQ deliveries queue', redis: true },
])('out and in, $mode', ({ redis }) => {
  const skip = redis && !withRedis;
  const server = useTestServer({ redis, env: ENV });
  const admin = (project: TestProject, method: string, p: string, body?: unknown) =>
    server.request(method, `/api/v1/projects/${project.id}${p}`, { bearer: project.account.adminToken, body });
  const statusOf = async (project: TestProject, id: string) => (await admin(project, 'GET', `/feedbacks/${id}`)).body.status;
  const webhookOutcomes = async (integrationId: string, count: number) =>
    until(`${count} webhooks applied`, 15_000, async () => {
      const rows = await server.sql<
        { outcome: string | null }[]
      >`select outcome from tracker_inbound where integration_id = ${integrationId} order by id`;
      return rows.length === count && rows.every((row) => row.outcome !== null) ? rows.map((row) => row.outcome as string) : undefined;
    });

  async function githubItem(plan: 'pro' | 'team' = 'pro') {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan });
    const created = await admin(project, 'POST', '/integrations', {
      kind: 'github',
      token: github.token,
      repository: github.repository,
      api_url: github.url,
    });
    github.webhook = {
      url: `${server.url}/api/v1/integrations/github/webhook?integration=${created.body.id}`,
      secret: created.body.webhook_secret,
    };
    const item = await createFeedback(server, project, { title: 'Two-factor login' });
    const link = (await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id })).body;
    github.calls.length = 0;
    return { github, project, item, link, integration: created.body };
  }

  async function linearItem() {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const secret = 'lin_wh_signing_secret_0123456789';
    const created = await admin(project, 'POST', '/integrations', {
      kind: 'linear',
      token: linear.apiKey,
      team_id: linear.team.id,
      api_url: linear.url,
      webhook_secret: secret,
    });
    linear.webhook = { url: `${server.url}/api/v1/integrations/linear/webhook?integration=${created.body.id}`, secret, webhookId: 'w-1' };
    const item = await createFeedback(server, project, { title: 'Two-factor login' });
    const link = (await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id })).body;
    linear.calls.length = 0;
    return { linear, project, item, link, integration: created.body };
  }

  it.skipIf(skip)('status out, through the map, one delivery per linked issue in the delivery log', async () => {
    const { github, project, item, link } = await githubItem();
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    const deliveries = trackerDeliveries(await settledDeliveries(server, project));
    expect(deliveries).toEqual([
      expect.objectContaining({ type: 'feedback.status_changed', channel: 'github', recipient: link.id, status: 'delivered', attempts: 1 }),
    ]);
    expect(github.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'completed', labels: ['done'] });

    const other = await linearItem();
    await admin(other.project, 'PATCH', `/feedbacks/${other.item.id}`, { status: 'rejected' });
    await settledDeliveries(server, other.project);
    expect([...other.linear.issues.values()][0]?.stateId).toBe(other.linear.stateNamed('Canceled').id);
  });

  it.skipIf(skip)('no loop: each change one way costs exactly the calls it needs, and its echo none', async () => {
    const { github, project, item, integration } = await githubItem('team');
    // Ours: read the issue, close it (2 calls); GitHub's `closed` webhook comes back and changes nothing.
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    await settledDeliveries(server, project);
    await github.settled();
    const [echo] = await webhookOutcomes(integration.id, 1);
    expect(['echo', 'unchanged']).toContain(echo);
    expect(github.calls.map((call) => call.method)).toEqual(['GET', 'PATCH']);
    expect(await statusOf(project, item.id)).toBe('completed');

    // The tracker's: a person reopens the issue; the item is approved, and its delivery to the
    // issue sends nothing: the issue stands for that status already.
    await github.reopenIssue(1);
    await until('the item approved', 15_000, async () => (await statusOf(project, item.id)) === 'approved');
    const deliveries = trackerDeliveries(await settledDeliveries(server, project));
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ]);
    expect(await webhookOutcomes(integration.id, 2)).toEqual([echo, 'status_changed']);
    expect(github.calls.map((call) => call.method)).toEqual(['GET', 'PATCH']);
    expect(github.webhooks).toHaveLength(2);
  });

  it.skipIf(skip)('auto_create: every new item gets its issue by itself, through a delivery in the log; turned off, none', async () => {
    const github = await startGithubStandin();
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const auto = await admin(project, 'POST', '/integrations', {
      kind: 'github',
      token: github.token,
      repository: github.repository,
      api_url: github.url,
      auto_create: true,
    });
    expect(auto.body.auto_create).toBe(true);
    // A tracker without auto_create is not called for a new item.
    await admin(project, 'POST', '/integrations', { kind: 'linear', token: linear.apiKey, team_id: linear.team.id, api_url: linear.url });

    const item = await createFeedback(server, project, { title: 'Offline mode', description: 'Work on the plane' });
    const deliveries = trackerDeliveries(await settledDeliveries(server, project));
    expect(deliveries).toEqual([
      expect.objectContaining({ type: 'feedback.created', channel: 'github', recipient: item.id, status: 'delivered', attempts: 1 }),
    ]);
    expect([...github.issues.values()]).toEqual([
      expect.objectContaining({ number: 1, title: 'Offline mode', state: 'open', labels: ['backlog'] }),
    ]);
    expect(github.issues.get(1)?.body).toContain(`/projects/${project.id}/feedback/${item.id}`);
    expect((await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body).toEqual([
      expect.objectContaining({ integration_id: auto.body.id, key: '#1', state: 'open', synced_status: 'pending' }),
    ]);
    expect(linear.calls).toEqual([]);
    // The issue is linked like one made by hand: the item's status follows out.
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    await settledDeliveries(server, project);
    expect(github.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'completed' });

    const off = await admin(project, 'PATCH', `/integrations/${auto.body.id}`, { auto_create: false });
    expect(off.body.auto_create).toBe(false);
    const later = await createFeedback(server, project, { title: 'Widgets' });
    const after = trackerDeliveries(await settledDeliveries(server, project));
    expect(after.filter((d) => d.recipient === later.id)).toEqual([]);
    expect(github.issues.size).toBe(1);
    expect((await admin(project, 'GET', `/feedbacks/${later.id}/issues`)).body).toEqual([]);
  });
});

describe('votes out, and failures', () => {
  const server = useTestServer({ env: ENV });
  const admin = (project: TestProject, method: string, p: string, body?: unknown) =>
    server.request(method, `/api/v1/projects/${project.id}${p}`, { bearer: project.account.adminToken, body });

  async function githubItem(): Promise<{
    github: GithubStandin;
    project: TestProject;
    item: { id: string };
    link: { id: string };
    integration: { id: string };
  }> {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await admin(project, 'POST', '/integrations', {
      kind: 'github',
      token: github.token,
      repository: github.repository,
      api_url: github.url,
    });
    const item = await createFeedback(server, project, { title: 'Two-factor login' });
    const link = (await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id })).body;
    github.calls.length = 0;
    return { github, project, item, link, integration: created.body };
  }
  const vote = (project: TestProject, itemId: string, userId: string) =>
    server.request('POST', `/api/v1/feedbacks/${itemId}/votes`, { apiKey: project.apiKey, body: { userId } });
  /** A test clock for the minute between votes updates: the last one moved into the past. */
  const lastVotesUpdateAgo = (linkId: string, seconds: number) =>
    server.sql`update tracker_links set votes_line_at = now() - make_interval(secs => ${seconds}) where id = ${linkId}`;
  const patches = (github: GithubStandin) => github.calls.filter((call) => call.method === 'PATCH');

  it('votes out: the issue’s votes line follows, at most once a minute per issue; a wait is no attempt', async () => {
    const { github, project, item, link } = await githubItem();
    await lastVotesUpdateAgo(link.id, 120);
    await vote(project, item.id, 'v-1');
    await until('the votes line written', 15_000, async () => github.issues.get(1)?.body.includes('**Votes:** 2') === true);
    // Within the minute: the next vote waits for it, whatever comes meanwhile (one pending update).
    await vote(project, item.id, 'v-2');
    await vote(project, item.id, 'v-3');
    const waiting = await until('the update put off', 15_000, async () => {
      const pending = (await listDeliveries(server, project, { status: 'pending' })).filter((d) => d.type === 'feedback.votes_changed');
      return pending.length === 1 && pending[0]?.last_error ? pending[0] : undefined;
    });
    expect(waiting).toMatchObject({ channel: 'github', attempts: 0, last_error: 'at most one votes update a minute per issue' });
    const [written] = await server.sql<{ at: Date }[]>`select votes_line_at as at from tracker_links where id = ${link.id}`;
    expect(Date.parse(waiting.next_attempt_at as string) - written!.at.getTime()).toBeGreaterThanOrEqual(59_000);
    expect(patches(github)).toHaveLength(1);

    // The minute passes (test clock): the one update carries both votes.
    await lastVotesUpdateAgo(link.id, 120);
    await server.sql`update deliveries set next_attempt_at = now() where id = ${waiting.id}`;
    await until('the votes line written again', 15_000, async () => github.issues.get(1)?.body.includes('**Votes:** 4') === true);
    expect(patches(github)).toHaveLength(2);
    const votes = (await settledDeliveries(server, project)).filter((d) => d.type === 'feedback.votes_changed');
    expect(votes.map((d) => [d.status, d.attempts])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
    ]);
  });

  it('votes reach the trackers only: a webhook integration of every type hears nothing of them', async () => {
    const receiver = await startHttpReceiver();
    const { project, item, link } = await githubItem();
    await settledDeliveries(server, project); // the item's creation, told before the webhook exists
    await admin(project, 'POST', '/integrations', { kind: 'webhook', url: receiver.url });
    await lastVotesUpdateAgo(link.id, 120);
    await vote(project, item.id, 'v-1');
    const deliveries = await settledDeliveries(server, project);
    expect(deliveries.filter((d) => d.type === 'feedback.votes_changed').map((d) => d.channel)).toEqual(['github']);
    expect(receiver.requests).toEqual([]);
  });

  it('a 401 fails the delivery for good and marks the integration as needing attention; the next change is not sent', async () => {
    const { github, project, item, integration } = await githubItem();
    github.inject({ status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } });
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    const [failed] = trackerDeliveries(await settledDeliveries(server, project));
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringContaining('GitHub refused the token') });
    expect((await admin(project, 'GET', `/integrations/${integration.id}`)).body.needs_attention).toContain('HTTP 401 Bad credentials');
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'rejected' });
    const after = trackerDeliveries(await settledDeliveries(server, project));
    expect(after[1]).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringContaining('needs attention') });
    expect(github.calls).toHaveLength(1);
  });

  it('a 429 with Retry-After, or a 403 with GitHub’s rate-limit reset, waits until then; a 5xx is retried with the backoff', async () => {
    const { github, project, item } = await githubItem();
    github.inject({ status: 429, headers: { 'retry-after': '2' }, body: { message: 'You have exceeded a secondary rate limit' } });
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    const waiting = await until('the first attempt refused', 15_000, async () => {
      const [row] = await server.sql<{ attempts: number; wait_ms: number; last_error: string }[]>`
        select attempts, (extract(epoch from next_attempt_at - updated_at) * 1000)::float8 as wait_ms, last_error
        from deliveries where project_id = ${project.id} and channel = 'github' and status = 'pending' and attempts = 1 and claim_token is null`;
      return row;
    });
    expect(waiting.last_error).toContain('rate limited');
    expect(waiting.wait_ms).toBeGreaterThanOrEqual(1_900);
    const [done] = trackerDeliveries(await settledDeliveries(server, project));
    expect(done).toMatchObject({ status: 'delivered', attempts: 2 });

    const reset = Math.floor(Date.now() / 1000) + 3;
    github.inject({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded' },
    });
    github.inject({ status: 502, body: { message: 'Server Error' } });
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'in_progress' });
    const [, second] = trackerDeliveries(await settledDeliveries(server, project, 30_000));
    expect(second).toMatchObject({ status: 'delivered', attempts: 3 });
    expect(Date.now()).toBeGreaterThanOrEqual((reset - 1) * 1000);
    expect(github.issues.get(1)).toMatchObject({ state: 'open' });
  });
});

// A Linear issue's push, to close the loop on both trackers' wording in the log.
describe('Linear’s failures', () => {
  const server = useTestServer({ env: ENV });
  it('RATELIMITED waits until X-RateLimit-Requests-Reset, then the issue moves', async () => {
    const linear: LinearStandin = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const admin = (method: string, p: string, body?: unknown) =>
      server.request(method, `/api/v1/projects/${project.id}${p}`, { bearer: project.account.adminToken, body });
    const created = await admin('POST', '/integrations', {
      kind: 'linear',
      token: linear.apiKey,
      team_id: linear.team.id,
      api_url: linear.url,
    });
    const item = await createFeedback(server, project);
    await admin('POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id });
    linear.inject({
      status: 400,
      headers: { 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(Date.now() + 2_000) },
      body: { errors: [{ message: 'Rate limit exceeded', extensions: { type: 'ratelimited', code: 'RATELIMITED', statusCode: 429 } }] },
    });
    await admin('PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    const [done] = trackerDeliveries(await settledDeliveries(server, project));
    expect(done).toMatchObject({ channel: 'linear', status: 'delivered', attempts: 2 });
    expect([...linear.issues.values()][0]?.stateId).toBe(linear.stateNamed('Done').id);
  });
});
