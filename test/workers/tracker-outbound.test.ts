import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../src/core/trackers.js';
import { TrackerInboundWorker } from '../../src/workers/trackers/inbound.worker.js';
import { createNewItemIssue, pushStatus, pushVotes } from '../../src/workers/trackers/outbound.js';
import { until } from '../helpers/eventually.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { provide } from '../helpers/lifecycle.js';
import { useTestServer } from '../helpers/server.js';
import { startGithubStandin, startLinearStandin } from '../helpers/trackers.js';

/*
 * Out (issue 42, docs/integrations.md): the pushes that keep an issue in step with its item, run
 * here by themselves against the stand-ins (test/helpers/trackers.ts), every call to the tracker
 * counted: the status through the map's `out`, the votes line, nothing sent for what is in step
 * already (a status the tracker itself set: the no-loop rule), a refused token marking the
 * integration, a rate limit's wait.
 */

// The deliveries do not run here (workers: false): this file runs each push itself, and the
// server's own delivery of the same change, pushing beside it, would change the calls it counts.
// The trackers' webhooks do come in: their worker alone runs, on the server's database.
const server = useTestServer({ workers: false, env: { ALLOW_PRIVATE_WEBHOOKS: 'true' } });
provide(
  'the inbound webhook worker',
  async () => {
    const worker = new TrackerInboundWorker(server.sql, pino({ level: 'silent' }), { intervalMs: 50 });
    worker.start();
    return worker;
  },
  (worker) => worker.stop(),
);
const deps = () => ({
  sql: server.sql,
  trackers: server.services.trackers,
  secretBox: server.services.secretBox,
  publicUrl: server.services.config.delivery.publicUrl,
});

const admin = (project: TestProject, method: string, p: string, body?: unknown) =>
  server.request(method, `/api/v1/projects/${project.id}${p}`, { bearer: project.account.adminToken, body });

async function githubItem() {
  const github = await startGithubStandin();
  const project = await createProject(server, { plan: 'pro' });
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
  const item = await createFeedback(server, project, { title: 'Calendar sync' });
  const link = (await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id })).body;
  github.calls.length = 0;
  return { github, project, item, link, integration: created.body };
}

async function linearItem() {
  const linear = await startLinearStandin();
  const project = await createProject(server, { plan: 'pro' });
  const created = await admin(project, 'POST', '/integrations', {
    kind: 'linear',
    token: linear.apiKey,
    team_id: linear.team.id,
    api_url: linear.url,
    webhook_secret: 'lin_wh_signing_secret_0123456789',
  });
  linear.webhook = {
    url: `${server.url}/api/v1/integrations/linear/webhook?integration=${created.body.id}`,
    secret: 'lin_wh_signing_secret_0123456789',
    webhookId: 'w-1',
  };
  const item = await createFeedback(server, project, { title: 'Calendar sync' });
  const link = (await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id })).body;
  linear.calls.length = 0;
  return { linear, project, item, link, integration: created.body };
}

const setStatus = (project: TestProject, id: string, status: string) => admin(project, 'PATCH', `/feedbacks/${id}`, { status });
const linkOf = async (project: TestProject, itemId: string) => (await admin(project, 'GET', `/feedbacks/${itemId}/issues`)).body[0];

describe('status out', () => {
  it('GitHub: closes the issue as completed, as not planned, reopens it; each with its label; in step costs nothing', async () => {
    const { github, project, item, link } = await githubItem();
    await setStatus(project, item.id, 'completed');
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'pushed', calls: 2 });
    expect(github.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'completed', labels: ['done'] });
    expect(await linkOf(project, item.id)).toMatchObject({ state: 'closed', synced_status: 'completed' });
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 0 });

    await setStatus(project, item.id, 'rejected');
    await pushStatus(deps(), link.id);
    expect(github.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'not_planned', labels: ['canceled'] });
    await setStatus(project, item.id, 'in_progress');
    await pushStatus(deps(), link.id);
    expect(github.issues.get(1)).toMatchObject({ state: 'open', labels: ['started'] });
    // testflight shares in_progress's state and label: one call to see that, none to change.
    await setStatus(project, item.id, 'testflight');
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 1 });
    expect(github.calls.filter((call) => call.method === 'PATCH')).toHaveLength(3);
  });

  it('Linear: moves the issue to the team’s state of the status', async () => {
    const { linear, project, item, link } = await linearItem();
    await setStatus(project, item.id, 'rejected');
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'pushed', calls: 2 });
    const issue = [...linear.issues.values()][0]!;
    expect(issue.stateId).toBe(linear.stateNamed('Canceled').id);
    expect(linear.calls.map((call) => call.operation)).toEqual(['workflowStates', 'issueUpdate']);
    expect(await linkOf(project, item.id)).toMatchObject({ state_name: 'Canceled', synced_status: 'rejected' });
  });

  it('no loop: a status the tracker set is not pushed back, and our push coming back as a webhook changes nothing', async () => {
    const { github, project, item, link, integration } = await githubItem();
    // The tracker's change: one webhook, the item completed, and nothing for the push to send.
    await github.closeIssue(1);
    await until(
      'the item completed',
      15_000,
      async () => (await admin(project, 'GET', `/feedbacks/${item.id}`)).body.status === 'completed',
    );
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 0 });
    expect(github.calls).toEqual([]);

    // Our change: two calls (read, then reopen), GitHub's `reopened` webhook comes back and is recognised.
    await setStatus(project, item.id, 'in_progress');
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'pushed', calls: 2 });
    await github.settled();
    const outcomes = await until('both webhooks applied', 15_000, async () => {
      const rows = await server.sql<
        { outcome: string | null }[]
      >`select outcome from tracker_inbound where integration_id = ${integration.id} order by id`;
      return rows.length === 2 && rows.every((row) => row.outcome !== null) ? rows.map((row) => row.outcome) : undefined;
    });
    expect(outcomes[0]).toBe('status_changed');
    expect(['echo', 'unchanged']).toContain(outcomes[1]);
    expect((await admin(project, 'GET', `/feedbacks/${item.id}`)).body.status).toBe('in_progress');
    expect(await pushStatus(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 0 });
    expect(github.calls.map((call) => call.method)).toEqual(['GET', 'PATCH']);
  });
});

describe('votes out', () => {
  it('rewrites the votes line when votes or voters’ MRR change, and only then', async () => {
    const { github, project, item, link } = await githubItem();
    expect(await pushVotes(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 0 }); // written at creation
    await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId: 'payer' } });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'payer', mrr: 99 } });
    expect(await pushVotes(deps(), link.id)).toMatchObject({ outcome: 'pushed', calls: 2 });
    expect(github.issues.get(1)?.body).toContain('**Votes:** 2 · **Voters’ MRR:** 99');
    expect(await pushVotes(deps(), link.id)).toMatchObject({ outcome: 'in_step', calls: 0 });
  });

  it('leaves the description of an issue linked as it was (no votes line)', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await admin(project, 'POST', '/integrations', {
      kind: 'linear',
      token: linear.apiKey,
      team_id: linear.team.id,
      api_url: linear.url,
    });
    const item = await createFeedback(server, project);
    const existing = linear.addIssue('Written by the team');
    existing.description = 'Our own notes.';
    const link = (
      await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id, issue: existing.identifier })
    ).body;
    expect(await pushVotes(deps(), link.id)).toMatchObject({ outcome: 'skipped', calls: 1 });
    expect(existing.description).toBe('Our own notes.');
  });
});

describe('failures', () => {
  it('a 401 marks the integration as needing attention, and no call is made with that token again', async () => {
    const { github, project, item, link, integration } = await githubItem();
    await setStatus(project, item.id, 'completed');
    github.inject({ status: 401, body: { message: 'Bad credentials' } });
    const refused = await pushStatus(deps(), link.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TrackerError);
    expect(refused).toMatchObject({ failure: 'unauthorized' });
    expect((await admin(project, 'GET', `/integrations/${integration.id}`)).body.needs_attention).toContain('HTTP 401');
    const calls = github.calls.length;
    await expect(pushStatus(deps(), link.id)).rejects.toMatchObject({ failure: 'unauthorized' });
    expect(github.calls.length).toBe(calls);
  });

  it('a 429 with Retry-After, or a 403 with GitHub’s rate-limit reset, is a wait of that long', async () => {
    const { github, project, item, link } = await githubItem();
    await setStatus(project, item.id, 'completed');
    github.inject({ status: 429, headers: { 'retry-after': '42' }, body: { message: 'You have exceeded a secondary rate limit' } });
    await expect(pushStatus(deps(), link.id)).rejects.toMatchObject({ failure: 'rate_limited', retryAfterMs: 42_000 });
    github.inject({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 300) },
      body: { message: 'API rate limit exceeded' },
    });
    const limited = (await pushStatus(deps(), link.id).catch((error: unknown) => error)) as TrackerError;
    expect(limited.failure).toBe('rate_limited');
    expect(limited.retryAfterMs).toBeGreaterThan(290_000);
    expect(limited.retryAfterMs).toBeLessThanOrEqual(300_000);
  });

  it('Linear’s RATELIMITED answer waits until X-RateLimit-Requests-Reset', async () => {
    const { linear, project, item, link } = await linearItem();
    await setStatus(project, item.id, 'completed');
    linear.inject({
      status: 400,
      headers: { 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': String(Date.now() + 120_000) },
      body: { errors: [{ message: 'Rate limit exceeded', extensions: { type: 'ratelimited', code: 'RATELIMITED', statusCode: 429 } }] },
    });
    const limited = (await pushStatus(deps(), link.id).catch((error: unknown) => error)) as TrackerError;
    expect(limited.failure).toBe('rate_limited');
    expect(limited.retryAfterMs).toBeGreaterThan(110_000);
  });
});

describe('a new item’s issue (auto_create)', () => {
  it('is made once; none for a merged item, one linked by hand, or once auto_create is off; a 401 marks the integration', async () => {
    const { github, project, item: linkedByHand, integration } = await githubItem();
    const fresh = await createFeedback(server, project, { title: 'Dark mode' });
    const duplicate = await createFeedback(server, project, { title: 'Dark theme' });
    await admin(project, 'POST', `/feedbacks/${duplicate.id}/merge`, { intoId: fresh.id });
    // Turned on after the items were made: their own deliveries were expanded without it.
    await admin(project, 'PATCH', `/integrations/${integration.id}`, { auto_create: true });
    github.calls.length = 0;

    expect(await createNewItemIssue(deps(), integration.id, duplicate.id)).toMatchObject({ outcome: 'skipped', calls: 0 });
    expect(await createNewItemIssue(deps(), integration.id, linkedByHand.id)).toMatchObject({ outcome: 'in_step', calls: 0 });
    expect(await createNewItemIssue(deps(), integration.id, fresh.id)).toMatchObject({ outcome: 'pushed', calls: 1 });
    expect(github.issues.get(2)).toMatchObject({ title: 'Dark mode', state: 'open' });
    // A retry of the same delivery (the worker stopped after the link was written) makes no second issue.
    expect(await createNewItemIssue(deps(), integration.id, fresh.id)).toMatchObject({ outcome: 'in_step', calls: 0 });
    expect(github.calls.map((call) => call.method)).toEqual(['POST']);

    const refused = await createFeedback(server, project, { title: 'Widgets' });
    github.inject({ status: 401, body: { message: 'Bad credentials' } });
    await expect(createNewItemIssue(deps(), integration.id, refused.id)).rejects.toMatchObject({ failure: 'unauthorized' });
    expect((await admin(project, 'GET', `/integrations/${integration.id}`)).body.needs_attention).toContain('HTTP 401');

    await admin(project, 'PATCH', `/integrations/${integration.id}`, { auto_create: false, token: github.token });
    expect(await createNewItemIssue(deps(), integration.id, refused.id)).toMatchObject({ outcome: 'skipped', calls: 0 });
  });
});
