import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { TrackerInboundWorker } from '../../src/workers/trackers/inbound.worker.js';
import { until } from '../helpers/eventually.js';
import { expectError } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { requestTo, useTestServer } from '../helpers/server.js';
import { startGithubStandin, startLinearStandin } from '../helpers/trackers.js';

/*
 * The trackers' webhooks (issue 42, docs/integrations.md "In"): signed as GitHub and Linear sign
 * them (by the stand-ins of test/helpers/trackers.ts, with the documented payloads: GitHub
 * `issues` `closed`/`reopened`, Linear `Issue` `update` with `updatedFrom.stateId`), recorded and
 * answered at once, then applied by the trackers' worker: a linked item's status follows through
 * the map's inverse, and its voters get the usual status emails (.eml files: no SMTP_URL here).
 */

const server = useTestServer({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true', DELIVERY_BACKOFF_MS: '50' } });

const admin = (project: TestProject, method: string, p: string, body?: unknown) =>
  server.request(method, `/api/v1/projects/${project.id}${p}`, { bearer: project.account.adminToken, body });

const inboundCount = async (integrationId: string) =>
  (await server.sql<{ n: number }[]>`select count(*)::int as n from tracker_inbound where integration_id = ${integrationId}`)[0]!.n;

async function outcomes(integrationId: string): Promise<string[]> {
  return until(`the webhooks of ${integrationId} processed`, 15_000, async () => {
    const rows = await server.sql<
      { outcome: string | null }[]
    >`select outcome from tracker_inbound where integration_id = ${integrationId} order by id`;
    return rows.every((row) => row.outcome !== null) ? rows.map((row) => row.outcome as string) : undefined;
  });
}

/** A Team project (voters are emailed on Team) with an item, two opted-in voters and one who did not opt in. */
async function itemWithVoters() {
  const project = await createProject(server, { plan: 'team' });
  const item = await createFeedback(server, project, { title: 'Export to CSV' });
  // Addresses of this project alone: every test's emails land in the one mail folder of the server.
  const suffix = project.id.slice(0, 8);
  const voters = { a: `voter-a-${suffix}@example.com`, b: `voter-b-${suffix}@example.com`, c: `voter-c-${suffix}@example.com` };
  for (const [userId, email, notifyStatusChange] of [
    ['voter-a', voters.a, true],
    ['voter-b', voters.b, true],
    ['voter-c', voters.c, false],
  ] as const) {
    const vote = await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, {
      apiKey: project.apiKey,
      body: { userId, email, notifyStatusChange },
    });
    expect(vote.status, JSON.stringify(vote.body)).toBe(200);
  }
  return { project, item, voters };
}

async function githubSetup() {
  const github = await startGithubStandin();
  const { project, item, voters } = await itemWithVoters();
  const created = await admin(project, 'POST', '/integrations', {
    kind: 'github',
    token: github.token,
    repository: github.repository,
    api_url: github.url,
  });
  expect(created.status).toBe(200);
  github.webhook = {
    url: `${server.url}/api/v1/integrations/github/webhook?integration=${created.body.id}`,
    secret: created.body.webhook_secret,
  };
  const issue = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id });
  expect(issue.status, JSON.stringify(issue.body)).toBe(200);
  return { github, project, item, voters, integration: created.body, number: Number(issue.body.external_id) };
}

async function linearSetup() {
  const linear = await startLinearStandin();
  const { project, item, voters } = await itemWithVoters();
  const created = await admin(project, 'POST', '/integrations', {
    kind: 'linear',
    token: linear.apiKey,
    team_id: linear.team.id,
    api_url: linear.url,
    webhook_secret: 'lin_wh_signing_secret_0123456789',
  });
  expect(created.status).toBe(200);
  linear.webhook = {
    url: `${server.url}/api/v1/integrations/linear/webhook?integration=${created.body.id}`,
    secret: 'lin_wh_signing_secret_0123456789',
    webhookId: 'webhook-1',
  };
  const issue = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.body.id });
  expect(issue.status, JSON.stringify(issue.body)).toBe(200);
  return { linear, project, item, voters, integration: created.body, identifier: issue.body.key as string };
}

const statusOf = async (project: TestProject, id: string) => (await admin(project, 'GET', `/feedbacks/${id}`)).body.status;

/** The .eml files written so far, by recipient. */
async function emailsTo(address: string): Promise<string[]> {
  const dir = path.join(server.dataDir, 'mail');
  // Only finished files: a mail being written is a .eml.tmp until it is renamed.
  const names = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.eml'));
  const texts = await Promise.all(names.map((name) => readFile(path.join(dir, name), 'utf8')));
  return texts.filter((text) => text.includes(`To: ${address}`));
}

const post = (url: string, delivery: { headers: Record<string, string>; body: string }) =>
  requestTo(url.replace(/^(https?:\/\/[^/]+).*$/, '$1'), 'POST', url.replace(/^https?:\/\/[^/]+/, ''), {
    headers: delivery.headers,
    rawBody: delivery.body,
  });

describe('GitHub’s webhook', () => {
  it('a closed issue completes the item and emails its opted-in voters; reopening it brings the item back', async () => {
    const { github, project, item, voters, integration, number } = await githubSetup();
    const sent = await github.closeIssue(number);
    expect(sent?.status).toBe(200);
    expect(JSON.parse(sent!.body)).toEqual({ received: true, duplicate: false });
    await until('the item completed', 15_000, async () => (await statusOf(project, item.id)) === 'completed');
    expect(await outcomes(integration.id)).toEqual(['status_changed']);
    const [link] = (await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body;
    expect(link).toMatchObject({ state: 'closed', state_name: 'Closed', synced_status: 'completed' });

    const mails = await until('the voters’ emails', 15_000, async () => {
      const [a, b] = [await emailsTo(voters.a), await emailsTo(voters.b)];
      return a.length === 1 && b.length === 1 ? [...a, ...b] : undefined;
    });
    expect(mails[0]).toContain('Export to CSV');
    expect(await emailsTo(voters.c)).toEqual([]);

    await github.reopenIssue(number);
    await until('the item reopened', 15_000, async () => (await statusOf(project, item.id)) === 'approved');
    expect(await outcomes(integration.id)).toEqual(['status_changed', 'status_changed']);
  });

  it('closed as not planned rejects the item', async () => {
    const { github, project, item, number } = await githubSetup();
    await github.closeIssue(number, 'not_planned');
    await until('the item rejected', 15_000, async () => (await statusOf(project, item.id)) === 'rejected');
  });

  it('a bad or missing signature is a 401 and nothing is recorded', async () => {
    const { github, integration, number } = await githubSetup();
    const url = github.webhook!.url;
    const wrong = github.signedDelivery('closed', number, { secret: 'whsec_not_the_right_one_at_all' });
    expectError(await post(url, wrong), 401, 'signature');
    const unsigned = github.signedDelivery('closed', number);
    delete unsigned.headers['x-hub-signature-256'];
    expectError(await post(url, unsigned), 401, 'signature');
    const tampered = github.signedDelivery('closed', number);
    expectError(await post(url, { ...tampered, body: tampered.body.replace('"closed"', '"reopened"') }), 401, 'signature');
    // Another integration's id, or none: the same 401.
    const signed = github.signedDelivery('closed', number);
    expectError(await post(url.replace(/integration=[^&]+/, 'integration=00000000-0000-4000-8000-000000000000'), signed), 401);
    expectError(await post(url.replace(/\?.*$/, ''), signed), 401);
    expect(await inboundCount(integration.id)).toBe(0);
  });

  it('a redelivery (the same X-GitHub-Delivery) changes nothing', async () => {
    const { github, project, item, integration, number } = await githubSetup();
    github.issues.get(number)!.state = 'closed';
    const delivery = github.signedDelivery('closed', number, { deliveryId: 'a-delivery-guid' });
    expect((await post(github.webhook!.url, delivery)).body).toEqual({ received: true, duplicate: false });
    await until('the item completed', 15_000, async () => (await statusOf(project, item.id)) === 'completed');
    // The owner moves the item on; GitHub redelivers the old close.
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'in_progress' });
    expect((await post(github.webhook!.url, delivery)).body).toEqual({ received: true, duplicate: true });
    expect(await outcomes(integration.id)).toEqual(['status_changed']);
    expect(await statusOf(project, item.id)).toBe('in_progress');
  });

  it('a delivery of a change older than 5 minutes is refused as a replay (400), and not recorded', async () => {
    const { github, integration, number } = await githubSetup();
    const old = github.signedDelivery('closed', number, { updatedAt: new Date(Date.now() - 6 * 60_000).toISOString() });
    expectError(await post(github.webhook!.url, old), 400, 'replay');
    expect(await inboundCount(integration.id)).toBe(0);
  });

  it('an issue no item is linked to answers 200 and changes nothing; a ping is recorded and ignored', async () => {
    const { github, project, item, integration } = await githubSetup();
    const stray = github.addIssue('Not linked');
    await github.closeIssue(stray.number);
    const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, hook: { type: 'Repository' } });
    const signature = (await import('node:crypto')).createHmac('sha256', integration.webhook_secret).update(ping).digest('hex');
    const pinged = await post(github.webhook!.url, {
      body: ping,
      headers: { 'x-github-event': 'ping', 'x-github-delivery': 'ping-1', 'x-hub-signature-256': `sha256=${signature}` },
    });
    expect(pinged.status).toBe(200);
    expect(await outcomes(integration.id)).toEqual(['unlinked', 'ignored']);
    expect(await statusOf(project, item.id)).toBe('pending');
    // The owner sees what each webhook did, newest first.
    const listed = await admin(project, 'GET', `/integrations/${integration.id}/webhooks`);
    expect(listed.body).toEqual([
      expect.objectContaining({ delivery_id: 'ping-1', outcome: 'ignored', detail: 'not an issue state change' }),
      expect.objectContaining({ outcome: 'unlinked', detail: `no item is linked to #${stray.number}`, processed_at: expect.any(String) }),
    ]);
  });
});

describe('the trackers’ worker', () => {
  it('sets a delivery that keeps failing aside, and applies the ones after it', async () => {
    const { github, project, item, integration, number } = await githubSetup();
    // A recorded delivery the worker cannot apply (no issue in it), ahead of a good one.
    await server.sql`insert into tracker_inbound (integration_id, delivery_id, event) values (${integration.id}, 'broken', '{}'::jsonb)`;
    await github.closeIssue(number);
    await until('the item completed', 30_000, async () => (await statusOf(project, item.id)) === 'completed');
    const [broken] = await server.sql<{ outcome: string; detail: string }[]>`
      select outcome, detail from tracker_inbound where integration_id = ${integration.id} and delivery_id = 'broken'`;
    expect(broken).toMatchObject({ outcome: 'ignored', detail: expect.stringMatching(/^could not be applied \(5 attempts\)/) });
  });
});

describe('Linear’s webhook', () => {
  it('moving the issue to Canceled rejects the item and emails its voters; In Progress sets in_progress', async () => {
    const { linear, project, item, voters, integration, identifier } = await linearSetup();
    await linear.moveIssue(identifier, 'Canceled');
    await until('the item rejected', 15_000, async () => (await statusOf(project, item.id)) === 'rejected');
    await until('the voters’ emails', 15_000, async () => (await emailsTo(voters.a)).length === 1);
    await linear.moveIssue(identifier, 'In Progress');
    await until('the item in progress', 15_000, async () => (await statusOf(project, item.id)) === 'in_progress');
    expect(await outcomes(integration.id)).toEqual(['status_changed', 'status_changed']);
  });

  it('an unmapped state (Triage) is recorded and ignored; the item keeps its status', async () => {
    const { linear, project, item, integration, identifier } = await linearSetup();
    await linear.moveIssue(identifier, 'Triage');
    expect(await outcomes(integration.id)).toEqual(['unmapped']);
    expect(await statusOf(project, item.id)).toBe('pending');
    const [link] = (await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body;
    expect(link).toMatchObject({ state_name: 'Triage' });
  });

  it('a state of the same status keeps the item (In Review is `started`, as In Progress)', async () => {
    const { linear, project, item, integration, identifier } = await linearSetup();
    await linear.moveIssue(identifier, 'In Progress');
    await until('the item in progress', 15_000, async () => (await statusOf(project, item.id)) === 'in_progress');
    await linear.moveIssue(identifier, 'In Review');
    expect(await outcomes(integration.id)).toEqual(['status_changed', 'unchanged']);
  });

  it('a bad signature is a 401; a webhookTimestamp more than 5 minutes away a 400; the same webhookId and timestamp a redelivery', async () => {
    const { linear, integration, identifier } = await linearSetup();
    const issue = [...linear.issues.values()].find((entry) => entry.identifier === identifier)!;
    const from = issue.stateId;
    issue.stateId = linear.stateNamed('Done').id;
    const url = linear.webhook!.url;
    expectError(await post(url, linear.signedDelivery(issue, from, { secret: 'not-the-signing-secret' })), 401, 'signature');
    expectError(await post(url, linear.signedDelivery(issue, from, { timestamp: Date.now() - 6 * 60_000 })), 400, 'replay');
    expect(await inboundCount(integration.id)).toBe(0);
    const delivery = linear.signedDelivery(issue, from);
    expect((await post(url, delivery)).body).toEqual({ received: true, duplicate: false });
    expect((await post(url, delivery)).body).toEqual({ received: true, duplicate: true });
    expect(await outcomes(integration.id)).toEqual(['status_changed']);
  });
});

// Last in the file: it stops the server's trackers' worker.
describe('answering', () => {
  it('answers once the delivery is recorded, without waiting for it to be applied', async () => {
    const { github, project, item, integration, number } = await githubSetup();
    await server.workers?.trackerInbound.stop();
    const sent = await github.closeIssue(number);
    expect(sent?.status).toBe(200);
    const [row] = await server.sql<
      { processed_at: Date | null }[]
    >`select processed_at from tracker_inbound where integration_id = ${integration.id}`;
    expect(row?.processed_at).toBeNull();
    expect(await statusOf(project, item.id)).toBe('pending');
    // Another worker (any process's) applies it.
    expect(await new TrackerInboundWorker(server.sql, pino({ level: 'silent' })).drain()).toBe(1);
    expect(await statusOf(project, item.id)).toBe('completed');
  });
});
