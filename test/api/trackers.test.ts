import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { type GithubStandin, type LinearStandin, startGithubStandin, startLinearStandin } from '../helpers/trackers.js';

/*
 * Issue trackers (issue 42, docs/integrations.md): the `github` and `linear` integration kinds,
 * discovery for the setup's pickers, and an item's issues (create, link, unlink), through the
 * real @octokit/rest and @linear/sdk clients against stand-ins of GitHub's and Linear's APIs on
 * 127.0.0.1 (test/helpers/trackers.ts).
 */

const server = useTestServer({ env: { ALLOW_PRIVATE_WEBHOOKS: 'true', PUBLIC_URL: 'https://feedback.example.com' } });

const integrations = (project: TestProject) => `/api/v1/projects/${project.id}/integrations`;
const admin = (project: TestProject, method: string, path: string, body?: unknown) =>
  server.request(method, `/api/v1/projects/${project.id}${path}`, { bearer: project.account.adminToken, body });

async function addGithub(project: TestProject, github: GithubStandin, extra: Record<string, unknown> = {}) {
  const response = await server.request('POST', integrations(project), {
    bearer: project.account.adminToken,
    body: { kind: 'github', token: github.token, repository: github.repository, api_url: github.url, ...extra },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function addLinear(project: TestProject, linear: LinearStandin, extra: Record<string, unknown> = {}) {
  const response = await server.request('POST', integrations(project), {
    bearer: project.account.adminToken,
    body: { kind: 'linear', token: linear.apiKey, team_id: linear.team.id, api_url: linear.url, ...extra },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

describe('creating a tracker integration', () => {
  it('answers a github integration with its webhook URL and the generated secret once; the token is stored sealed and never answered', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await addGithub(project, github);
    expect(created).toEqual({
      id: expect.any(String),
      project_id: project.id,
      kind: 'github',
      url: github.url,
      events: [],
      enabled: true,
      has_secret: true,
      api_url: github.url,
      repository: 'acme/app',
      team_id: null,
      linear_project_id: null,
      status_map: {
        out: { pending: 'open', approved: 'open', in_progress: 'open', testflight: 'open', completed: 'closed', rejected: 'not_planned' },
        in: { open: 'approved', closed: 'completed', not_planned: 'rejected' },
        labels: {
          pending: 'backlog',
          approved: 'unstarted',
          in_progress: 'started',
          testflight: 'started',
          completed: 'done',
          rejected: 'canceled',
        },
      },
      // Off by default: an owner turns "every new item creates an issue" on.
      auto_create: false,
      webhook_url: `https://feedback.example.com/api/v1/integrations/github/webhook?integration=${created.id}`,
      has_token: true,
      needs_attention: null,
      needs_attention_at: null,
      webhook_secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const [stored] = await server.sql<{ token_sealed: string; webhook_secret_sealed: string }[]>`
      select token_sealed, webhook_secret_sealed from tracker_settings where integration_id = ${created.id}`;
    expect(stored!.token_sealed).toMatch(/^v1\./);
    expect(stored!.token_sealed).not.toContain(github.token);
    expect(stored!.webhook_secret_sealed).not.toContain(created.webhook_secret);
    expect(server.services.secretBox.open(stored!.token_sealed)).toBe(github.token);
    // Listed, read and changed without token or secret.
    for (const answer of [
      (await admin(project, 'GET', '/integrations')).body[0],
      (await admin(project, 'GET', `/integrations/${created.id}`)).body,
      (await admin(project, 'PATCH', `/integrations/${created.id}`, { enabled: false })).body,
    ]) {
      expect(answer).not.toHaveProperty('webhook_secret');
      expect(JSON.stringify(answer)).not.toContain(github.token);
      expect(answer).toMatchObject({ kind: 'github', repository: 'acme/app', has_token: true });
    }
    // No call is made to create it.
    expect(github.calls).toEqual([]);
  });

  it('answers a linear integration with the origin’s map; a webhook secret of Linear’s is taken and not answered', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'team' });
    const created = await addLinear(project, linear, { webhook_secret: 'lin_wh_0123456789abcdef', linear_project_id: 'project-1' });
    expect(created).toMatchObject({
      kind: 'linear',
      team_id: linear.team.id,
      repository: null,
      linear_project_id: 'project-1',
      status_map: {
        out: {
          pending: 'backlog',
          approved: 'unstarted',
          in_progress: 'started',
          testflight: 'started',
          completed: 'completed',
          rejected: 'canceled',
        },
        in: { backlog: 'pending', unstarted: 'approved', started: 'in_progress', completed: 'completed', canceled: 'rejected' },
        labels: null,
      },
    });
    expect(created).not.toHaveProperty('webhook_secret');
  });

  it('takes a status map change over the default, and removes an `in` state set to null', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const done = linear.stateNamed('Done').id;
    const created = await addLinear(project, linear, {
      status_map: { out: { completed: done }, in: { canceled: null, [done]: 'completed' } },
    });
    expect(created.status_map.out.completed).toBe(done);
    expect(created.status_map.in).toEqual({
      backlog: 'pending',
      unstarted: 'approved',
      started: 'in_progress',
      completed: 'completed',
      [done]: 'completed',
    });
    const changed = await admin(project, 'PATCH', `/integrations/${created.id}`, { status_map: { in: { triage: 'pending' } } });
    expect(changed.status).toBe(200);
    expect(changed.body.status_map.in.triage).toBe('pending');
    expect(changed.body.status_map.out.completed).toBe(done);
  });

  it.each([
    ['no token', { kind: 'github', repository: 'acme/app' }, 'token'],
    ['no repository', { kind: 'github', token: 'github_pat_0123456789' }, 'repository'],
    ['a repository that is no owner/name', { kind: 'github', token: 'github_pat_0123456789', repository: 'acme' }, 'repository'],
    ['no team', { kind: 'linear', token: 'lin_api_0123456789' }, 'teamId'],
    ['a repository for linear', { kind: 'linear', token: 'lin_api_0123456789', team_id: 't', repository: 'a/b' }, 'repository'],
    ['a team for github', { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', team_id: 't' }, 'teamId'],
    ['a url for a tracker', { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', url: 'https://x.example' }, 'url'],
    ['events for a tracker', { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', events: ['feedback.created'] }, 'events'],
    ['a token for slack', { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/X', token: 'github_pat_0123456789' }, 'token'],
    ['no url for slack', { kind: 'slack' }, 'url'],
    ['auto_create for slack', { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/X', auto_create: true }, 'autoCreate'],
    [
      'auto_create that is no boolean',
      { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', auto_create: 'yes' },
      'autoCreate',
    ],
    [
      'a GitHub state that is not one',
      { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', status_map: { out: { completed: 'done' } } },
      'statusMap.out.completed',
    ],
    [
      'a Linear state that is no type or id',
      { kind: 'linear', token: 'lin_api_0123456789', team_id: 't', status_map: { in: { finished: 'completed' } } },
      'statusMap.in.finished',
    ],
    [
      'labels for linear',
      { kind: 'linear', token: 'lin_api_0123456789', team_id: 't', status_map: { labels: { pending: 'x' } } },
      'statusMap.labels',
    ],
    [
      'a status that is not one',
      { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', status_map: { in: { open: 'shipped' } } },
      'statusMap.in.open',
    ],
    [
      'a map key that is no status',
      { kind: 'github', token: 'github_pat_0123456789', repository: 'a/b', status_map: { out: { shipped: 'closed' } } },
      'statusMap.out',
    ],
  ])('400 for %s, and nothing is stored', async (_label, body, field) => {
    const project = await createProject(server, { plan: 'pro' });
    expectError(await server.request('POST', integrations(project), { bearer: project.account.adminToken, body }), 400, field);
    expect((await admin(project, 'GET', '/integrations')).body).toEqual([]);
  });

  it('402 on the Free plan', async () => {
    const project = await createProject(server, { plan: 'free' });
    const response = await server.request('POST', integrations(project), {
      bearer: project.account.adminToken,
      body: { kind: 'github', token: 'github_pat_0123456789', repository: 'acme/app' },
    });
    expectError(response, 402);
  });

  it('a new token clears `needs_attention`', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await addGithub(project, github);
    await server.sql`update tracker_settings set needs_attention = 'GitHub refused the token', needs_attention_at = now() where integration_id = ${created.id}`;
    expect((await admin(project, 'GET', `/integrations/${created.id}`)).body.needs_attention).toBe('GitHub refused the token');
    const changed = await admin(project, 'PATCH', `/integrations/${created.id}`, { token: 'github_pat_another_one' });
    expect(changed.body).toMatchObject({ needs_attention: null, needs_attention_at: null });
  });

  it('a new repository is refused while issues of the current one are linked (409); allowed once none is', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await addGithub(project, github);
    const item = await createFeedback(server, project);
    const link = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: created.id });
    expectError(await admin(project, 'PATCH', `/integrations/${created.id}`, { repository: 'acme/other' }), 409, 'linked');
    await admin(project, 'DELETE', `/feedbacks/${item.id}/issues/${link.body.id}`);
    const moved = await admin(project, 'PATCH', `/integrations/${created.id}`, { repository: 'acme/other' });
    expect(moved.body.repository).toBe('acme/other');
  });

  it('a tracker is no channel of an alert (400): it takes no messages', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await addGithub(project, github);
    const alert = await admin(project, 'POST', '/alerts', {
      name: 'Sign-ups halved',
      measure: 'event_count',
      event: 'signup',
      interval: 'day',
      condition: { type: 'below', value: 5 },
      channels: { integrations: [created.id], email: false },
    });
    expectError(alert, 400, 'issue tracker');
  });

  it('“send test” is for message integrations: 409 for a tracker', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const created = await addGithub(project, github);
    expectError(await admin(project, 'POST', `/integrations/${created.id}/test`), 409);
  });
});

describe('discovery', () => {
  it('lists the repositories a GitHub token reaches, across GitHub’s pages', async () => {
    const github = await startGithubStandin({ extraRepositories: 150 });
    const project = await createProject(server, { plan: 'pro' });
    const response = await admin(project, 'POST', '/trackers/github/repositories', { token: github.token, api_url: github.url });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body).toHaveLength(151);
    expect(response.body[0]).toEqual({ full_name: 'acme/app', private: false, html_url: 'https://github.example/acme/app' });
    expect(github.calls.map((call) => call.path)).toEqual(
      ['/user/repos?per_page=100&sort=updated', '/user/repos?per_page=100&page=2&sort=updated'].map((path) =>
        expect.stringContaining(path.split('&sort')[0] as string),
      ),
    );
  });

  it('lists a Linear key’s teams and a team’s workflow states; with a saved integration, its own token and team', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const teams = await admin(project, 'POST', '/trackers/linear/teams', { token: linear.apiKey, api_url: linear.url });
    expect(teams.body).toEqual([linear.team]);
    const states = await admin(project, 'POST', '/trackers/linear/workflow-states', {
      token: linear.apiKey,
      api_url: linear.url,
      team_id: linear.team.id,
    });
    expect(states.body.map((state: { name: string }) => state.name)).toEqual([
      'Triage',
      'Backlog',
      'Todo',
      'In Progress',
      'In Review',
      'Done',
      'Canceled',
      'Duplicate',
    ]);
    const saved = await addLinear(project, linear);
    const again = await admin(project, 'POST', '/trackers/linear/workflow-states', { integration_id: saved.id });
    expect(again.body).toEqual(states.body);
    expect(linear.calls.every((call) => call.headers.authorization === linear.apiKey)).toBe(true);
  });

  it('a token the tracker refuses is a 400 naming the token; a saved integration’s is a 409 and marks it as needing attention', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    expectError(
      await admin(project, 'POST', '/trackers/github/repositories', { token: 'github_pat_wrong_token', api_url: github.url }),
      400,
      'token: GitHub refused the token',
    );
    const saved = await addGithub(project, github, { token: 'github_pat_revoked_token' });
    expectError(await admin(project, 'POST', '/trackers/github/repositories', { integration_id: saved.id }), 409, 'needs attention');
    const after = (await admin(project, 'GET', `/integrations/${saved.id}`)).body;
    expect(after.needs_attention).toMatch(/^GitHub refused the token \(list repositories: HTTP 401 Bad credentials\)/);
    // Not tried again until the owner gives another token.
    const calls = github.calls.length;
    expectError(await admin(project, 'POST', '/trackers/github/repositories', { integration_id: saved.id }), 409, 'needs attention');
    expect(github.calls.length).toBe(calls);
  });

  it('a Linear key Linear refuses is a 400 naming the token', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    expectError(
      await admin(project, 'POST', '/trackers/linear/teams', { token: 'lin_api_wrong_key', api_url: linear.url }),
      400,
      'token: Linear refused the API key',
    );
  });

  it('a rate limit is a 429 with Retry-After from GitHub’s reset; a 5xx a 502', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const reset = Math.floor(Date.now() / 1000) + 120;
    github.inject({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded' },
    });
    const limited = await admin(project, 'POST', '/trackers/github/repositories', { token: github.token, api_url: github.url });
    expectError(limited, 429, 'rate limiting');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(100);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(121);
    github.inject({ status: 503, body: { message: 'Service Unavailable' } });
    expectError(
      await admin(project, 'POST', '/trackers/github/repositories', { token: github.token, api_url: github.url }),
      502,
      'GitHub did not answer',
    );
  });

  it('400 for neither or both of token and integration_id', async () => {
    const project = await createProject(server, { plan: 'pro' });
    expectError(await admin(project, 'POST', '/trackers/linear/teams', {}), 400, 'token or integrationId');
    expectError(
      await admin(project, 'POST', '/trackers/linear/teams', {
        token: 'lin_api_0123456789',
        integration_id: '00000000-0000-4000-8000-000000000000',
      }),
      400,
      'token or integrationId',
    );
  });
});

describe('an item’s issues', () => {
  it('creates the GitHub issue of an item: its text, votes, voters’ MRR and link, the label of its status; the answer carries the issue', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const tracker = await addGithub(project, github);
    const item = await createFeedback(server, project, { title: 'Dark mode', description: 'Please add a dark theme.', userId: 'u-1' });
    await server.request('POST', '/api/v1/users/register', { apiKey: project.apiKey, body: { userId: 'u-1', mrr: 1250 } });
    const created = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: tracker.id });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.any(String),
      feedback_id: item.id,
      integration_id: tracker.id,
      kind: 'github',
      external_id: '1',
      key: '#1',
      url: 'https://github.example/acme/app/issues/1',
      title: 'Dark mode',
      state: 'open',
      state_name: 'Open',
      synced_status: 'pending',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const issue = github.issues.get(1)!;
    expect(issue.title).toBe('Dark mode');
    expect(issue.body).toContain('Please add a dark theme.');
    expect(issue.body).toContain('**Votes:** 1 · **Voters’ MRR:** 1,250');
    expect(issue.body).toContain(`(https://feedback.example.com/projects/${project.id}/feedback/${item.id})`);
    expect(issue.labels).toEqual(['backlog']);
    expect(github.calls.map((call) => `${call.method} ${call.path}`)).toEqual(['POST /repos/acme/app/issues']);
    expect((await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body).toEqual([created.body]);
  });

  it('creates the issue of a completed item closed, with its label', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const tracker = await addGithub(project, github);
    const item = await createFeedback(server, project);
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'completed' });
    const created = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: tracker.id });
    expect(created.body).toMatchObject({ state: 'closed', state_name: 'Closed', synced_status: 'completed' });
    expect(github.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'completed', labels: ['done'] });
  });

  it('creates the Linear issue of an item in the team’s state of its status, in the integration’s project', async () => {
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const tracker = await addLinear(project, linear, { linear_project_id: 'proj-1' });
    const item = await createFeedback(server, project, { title: 'Offline mode' });
    await admin(project, 'PATCH', `/feedbacks/${item.id}`, { status: 'in_progress' });
    const created = await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: tracker.id });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const inProgress = linear.stateNamed('In Progress');
    expect(created.body).toMatchObject({
      kind: 'linear',
      key: 'ENG-1',
      state: inProgress.id,
      state_name: 'In Progress',
      synced_status: 'in_progress',
    });
    const issue = [...linear.issues.values()][0]!;
    expect(issue).toMatchObject({ title: 'Offline mode', stateId: inProgress.id, projectId: 'proj-1' });
    expect(issue.description).toContain('**Votes:** 1 · **Voters’ MRR:** none tracked');
    expect(linear.calls.map((call) => call.operation)).toEqual(['workflowStates', 'issueCreate']);
  });

  it('links an existing issue by #123, by its URL, or ENG-42, as it is; unlinking leaves the issue', async () => {
    const github = await startGithubStandin();
    const linear = await startLinearStandin();
    const project = await createProject(server, { plan: 'pro' });
    const gh = await addGithub(project, github);
    const lin = await addLinear(project, linear);
    const first = await createFeedback(server, project);
    const second = await createFeedback(server, project);
    const existing = github.addIssue('Reported on GitHub');
    await github.closeIssue(existing.number, 'not_planned');
    const other = github.addIssue('Another one');
    const byNumber = await admin(project, 'POST', `/feedbacks/${first.id}/issues`, { integration_id: gh.id, issue: `#${existing.number}` });
    expect(byNumber.body).toMatchObject({
      key: '#1',
      state: 'not_planned',
      state_name: 'Closed as not planned',
      synced_status: null,
      title: 'Reported on GitHub',
    });
    const byUrl = await admin(project, 'POST', `/feedbacks/${second.id}/issues`, {
      integration_id: gh.id,
      issue: `https://github.com/acme/app/issues/${other.number}`,
    });
    expect(byUrl.body).toMatchObject({ key: '#2', state: 'open' });
    const linearIssue = linear.addIssue('From Linear');
    const byKey = await admin(project, 'POST', `/feedbacks/${first.id}/issues`, {
      integration_id: lin.id,
      issue: linearIssue.identifier.toLowerCase(),
    });
    expect(byKey.body).toMatchObject({ kind: 'linear', key: 'ENG-1', state: linear.stateNamed('Backlog').id, state_name: 'Backlog' });
    expect((await admin(project, 'GET', `/feedbacks/${first.id}/issues`)).body.map((link: { key: string }) => link.key)).toEqual([
      '#1',
      'ENG-1',
    ]);
    // Nothing was changed in the trackers.
    expect(github.calls.filter((call) => call.method !== 'GET')).toEqual([]);
    expect(linear.calls.map((call) => call.operation)).toEqual(['issue']);

    const removed = await admin(project, 'DELETE', `/feedbacks/${first.id}/issues/${byNumber.body.id}`);
    expect(removed.body).toEqual(byNumber.body);
    expect((await admin(project, 'GET', `/feedbacks/${first.id}/issues`)).body.map((link: { key: string }) => link.key)).toEqual(['ENG-1']);
    expect(github.issues.get(existing.number)).toMatchObject({ state: 'closed' });
    expectError(await admin(project, 'DELETE', `/feedbacks/${first.id}/issues/${byNumber.body.id}`), 404);
  });

  it('one issue per item and integration, one item per issue: 409, and nothing is created', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const gh = await addGithub(project, github);
    const first = await createFeedback(server, project);
    const second = await createFeedback(server, project);
    await admin(project, 'POST', `/feedbacks/${first.id}/issues`, { integration_id: gh.id });
    expectError(await admin(project, 'POST', `/feedbacks/${first.id}/issues`, { integration_id: gh.id }), 409, '#1');
    expectError(
      await admin(project, 'POST', `/feedbacks/${second.id}/issues`, { integration_id: gh.id, issue: '#1' }),
      409,
      'another item',
    );
    expect(github.issues.size).toBe(1);
  });

  it.each([
    ['an issue that is not there', { issue: '#99' }, 400, 'issue: #99'],
    ['an issue of another repository', { issue: 'https://github.com/acme/other/issues/1' }, 400, 'acme/other'],
    ['no issue reference', { issue: 'dark mode' }, 400, 'issue: must be'],
  ])('400 for %s', async (_label, body, status, reason) => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const gh = await addGithub(project, github);
    const item = await createFeedback(server, project);
    expectError(await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: gh.id, ...body }), status, reason);
    expect((await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body).toEqual([]);
  });

  it('400 for an integration that is no tracker of the project; 404 for an unknown item; 402 on Free', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const item = await createFeedback(server, project);
    const slack = await admin(project, 'POST', '/integrations', { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/X' });
    expectError(await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: slack.body.id }), 400, 'integrationId');
    expectError(
      await admin(project, 'POST', `/feedbacks/00000000-0000-4000-8000-000000000000/issues`, { integration_id: slack.body.id }),
      404,
    );
    const free = await createProject(server, { plan: 'free' });
    const freeItem = await createFeedback(server, free);
    expectError(await admin(free, 'POST', `/feedbacks/${freeItem.id}/issues`, { integration_id: slack.body.id }), 402);
  });

  it('a 401 from GitHub when creating the issue marks the integration as needing attention (409), a 422 is a 400 with GitHub’s reason', async () => {
    const github = await startGithubStandin();
    const project = await createProject(server, { plan: 'pro' });
    const gh = await addGithub(project, github);
    const item = await createFeedback(server, project);
    github.inject({
      status: 422,
      body: { message: 'Validation Failed', errors: [{ resource: 'Issue', code: 'custom', message: 'issues are locked' }] },
    });
    expectError(
      await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: gh.id }),
      400,
      'Validation Failed (issues are locked)',
    );
    github.inject({ status: 401, body: { message: 'Bad credentials' } });
    expectError(await admin(project, 'POST', `/feedbacks/${item.id}/issues`, { integration_id: gh.id }), 409, 'needs attention');
    expect((await admin(project, 'GET', `/integrations/${gh.id}`)).body.needs_attention).toContain('HTTP 401');
    expect((await admin(project, 'GET', `/feedbacks/${item.id}/issues`)).body).toEqual([]);
  });
});
