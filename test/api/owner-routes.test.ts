import { beforeAll, describe, expect, it } from 'vitest';
import { errorBody, expectError, MISSING_ID } from '../helpers/expect.js';
import { addMember, createAccount, createFeedback, createProject, setSuspended, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The owner's routes of the dashboard (admin token): the account and its plan, a project's SDK
 * users, one item with its voters and comments, the owner's reply, and the inbox's title search,
 * sort by voters' MRR and counts per status.
 */

const server = useTestServer();

const owner = (project: TestProject) => ({ bearer: project.account.adminToken });

function register(project: TestProject, userId: string, mrr?: number | null) {
  return server.request('POST', '/api/v1/users/register', {
    apiKey: project.apiKey,
    body: mrr === undefined ? { userId } : { userId, mrr },
  });
}

async function vote(project: TestProject, feedbackId: string, userId: string, email?: string) {
  const response = await server.request('POST', `/api/v1/feedbacks/${feedbackId}/votes`, {
    apiKey: project.apiKey,
    body: email === undefined ? { userId } : { userId, email },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
}

describe('GET /api/v1/account', () => {
  it('answers the token’s account, its plan and what the plan allows', async () => {
    const account = await createAccount(server, 'free');
    const response = await server.request('GET', '/api/v1/account', { bearer: account.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: account.id,
      email: account.email,
      plan: 'free',
      role: 'owner',
      limits: {
        max_projects: 1,
        max_feedback_per_project: 10,
        team_members: false,
        integrations: false,
        voter_notifications: false,
        custom_events_readable: false,
        metrics_window_days: 30,
        max_alerts_per_project: 0,
      },
      created_at: expect.any(String),
    });
  });

  it('a team member’s token answers the account with role member; unlimited limits are null', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const response = await server.request('GET', '/api/v1/account', { bearer: member.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: project.account.id, plan: 'team', role: 'member' });
    expect(response.body.limits).toMatchObject({ max_projects: null, max_feedback_per_project: null, metrics_window_days: 365 });
  });

  it('401 without a token or with an unknown one', async () => {
    expectError(await server.request('GET', '/api/v1/account'), 401);
    expectError(await server.request('GET', '/api/v1/account', { bearer: 'fba_unknown' }), 401);
  });
});

describe('GET /api/v1/projects/:id/users', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    // Registered one after the other, so first_seen_at follows this order.
    for (const [userId, mrr] of [
      ['u-a', 30],
      ['u-b', null],
      ['u-c', 120],
      ['u-d', 5],
    ] as const) {
      expect((await register(project, userId, mrr)).status).toBe(200);
    }
    // u-a comes back last: the latest last_seen_at, first_seen_at unchanged. Its MRR is sent again:
    // a registration without one clears it (SPEC 4.8 as the origin read it).
    expect((await register(project, 'u-a', 30)).status).toBe(200);
  });

  const list = (query: string, target = project) => server.request('GET', `/api/v1/projects/${target.id}/users${query}`, owner(target));
  const ids = (body: { users: { user_id: string }[] }) => body.users.map((user) => user.user_id);

  it('answers the SDK users with MRR, first and last seen, and the total; by default last seen first', async () => {
    const response = await list('');
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(4);
    expect(ids(response.body)).toEqual(['u-a', 'u-d', 'u-c', 'u-b']);
    expect(response.body.users[0]).toEqual({
      id: expect.any(String),
      user_id: 'u-a',
      external_id: 'u-a',
      mrr: 30,
      email: null,
      name: null,
      first_seen_at: expect.any(String),
      last_seen_at: expect.any(String),
    });
    // Whole seconds in the answer (SPEC timestamps): the order above is what proves the later last_seen_at.
    expect(Date.parse(response.body.users[0].last_seen_at)).toBeGreaterThanOrEqual(Date.parse(response.body.users[0].first_seen_at));
  });

  it('sorts by MRR both ways, users without MRR last in both', async () => {
    expect(ids((await list('?sort=mrr&order=desc')).body)).toEqual(['u-c', 'u-a', 'u-d', 'u-b']);
    expect(ids((await list('?sort=mrr&order=asc')).body)).toEqual(['u-d', 'u-a', 'u-c', 'u-b']);
  });

  it('sorts by first and last seen', async () => {
    expect(ids((await list('?sort=first_seen&order=asc')).body)).toEqual(['u-a', 'u-b', 'u-c', 'u-d']);
    expect(ids((await list('?sort=first_seen&order=desc')).body)).toEqual(['u-d', 'u-c', 'u-b', 'u-a']);
    expect(ids((await list('?sort=last_seen&order=asc')).body)).toEqual(['u-b', 'u-c', 'u-d', 'u-a']);
  });

  it('pages with limit and offset; the total counts every page', async () => {
    const response = await list('?sort=mrr&order=desc&limit=2&offset=1');
    expect(response.body).toMatchObject({ total: 4 });
    expect(ids(response.body)).toEqual(['u-a', 'u-d']);
  });

  it('400 naming the parameter for an unknown sort, order or a bad limit', async () => {
    expectError(await list('?sort=revenue'), 400, 'sort');
    expectError(await list('?order=up'), 400, 'order');
    expectError(await list('?limit=0'), 400, 'limit');
    expectError(await list('?limit=1&limit=2'), 400, 'limit');
  });

  it('q finds users by id, email or name in any letter case, wildcards as themselves; total counts the matches', async () => {
    const searched = await createProject(server, { plan: 'pro' });
    for (const body of [
      { userId: 'ada-1', email: 'ada@example.com', name: 'Ada Lovelace' },
      { userId: 'grace-2', email: 'grace@navy.example', name: 'Grace Hopper' },
      { userId: 'plain_3' },
      { userId: 'plainx3', name: '100% Alan' },
    ]) {
      const response = await server.request('POST', '/api/v1/users/register', { apiKey: searched.apiKey, body });
      expect(response.status).toBe(200);
    }
    const found = async (q: string) => {
      const response = await list(`?sort=first_seen&order=asc&q=${encodeURIComponent(q)}`, searched);
      expect(response.status).toBe(200);
      return { total: response.body.total, ids: ids(response.body) };
    };
    expect(await found('LOVELACE')).toEqual({ total: 1, ids: ['ada-1'] });
    expect(await found('navy.EXAMPLE')).toEqual({ total: 1, ids: ['grace-2'] });
    expect(await found('a-')).toEqual({ total: 1, ids: ['ada-1'] });
    // `_` and `%` are the characters, not LIKE's wildcards: plainx3 does not match `plain_`.
    expect(await found('plain_')).toEqual({ total: 1, ids: ['plain_3'] });
    expect(await found('100%')).toEqual({ total: 1, ids: ['plainx3'] });
    expect(await found('nobody')).toEqual({ total: 0, ids: [] });
    expect((await found('')).total).toBe(4);
    const registered = (await list('?q=ada', searched)).body.users[0];
    expect(registered).toMatchObject({ email: 'ada@example.com', name: 'Ada Lovelace' });
    expectError(await list(`?q=${'x'.repeat(201)}`, searched), 400, 'q');
  });

  it('401 without a token, 403 for another account’s project, 404 for a missing one', async () => {
    expectError(await server.request('GET', `/api/v1/projects/${project.id}/users`), 401);
    const stranger = await createProject(server);
    expectError(await server.request('GET', `/api/v1/projects/${project.id}/users`, owner(stranger)), 403);
    expectError(await server.request('GET', `/api/v1/projects/${MISSING_ID}/users`, owner(project)), 404);
  });
});

describe('one feedback item with the admin token', () => {
  let project: TestProject;
  let sibling: TestProject;
  let item: { id: string; total_mrr: number | null };
  let siblingItem: { id: string };
  beforeAll(async () => {
    project = await createProject(server, { plan: 'team' });
    // A second project of the same account: its items are not reachable through the first.
    sibling = await createProject(server, { account: project.account });
    item = await createFeedback(server, project, { userId: 'voter-creator', userEmail: 'creator@example.com' });
    siblingItem = await createFeedback(server, sibling);
    await register(project, 'voter-rich', 200);
    await register(project, 'voter-poor', 10.5);
    await register(project, 'voter-creator');
    await vote(project, item.id, 'voter-poor');
    await vote(project, item.id, 'voter-rich', 'rich@example.com');
    await vote(project, item.id, 'voter-unknown');
  });

  const path = (target: TestProject, id: string, tail = '') => `/api/v1/projects/${target.id}/feedbacks/${id}${tail}`;

  it('GET answers the Feedback (SPEC 2.1)', async () => {
    const response = await server.request('GET', path(project, item.id), owner(project));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: item.id, vote_count: 4, has_voted: false, total_mrr: 210.5, merged_feedback_ids: null });
  });

  it('404 for an item of another project of the same account, and for a malformed or missing id', async () => {
    for (const tail of ['', '/votes', '/comments']) {
      expectError(await server.request('GET', path(project, siblingItem.id, tail), owner(project)), 404);
      expectError(await server.request('GET', path(project, 'not-a-uuid', tail), owner(project)), 404);
      expectError(await server.request('GET', path(project, MISSING_ID, tail), owner(project)), 404);
    }
    const reply = await server.request('POST', path(project, siblingItem.id, '/comments'), { ...owner(project), body: { content: 'x' } });
    expectError(reply, 404);
  });

  it('403 for another account’s token, 401 without one', async () => {
    const stranger = await createProject(server);
    for (const tail of ['', '/votes', '/comments']) {
      expectError(await server.request('GET', path(project, item.id, tail), owner(stranger)), 403);
      expectError(await server.request('GET', path(project, item.id, tail)), 401);
    }
  });

  it('the voters with their email and MRR, highest MRR first and unknown last, and total_mrr as the item answers it', async () => {
    const response = await server.request('GET', path(project, item.id, '/votes'), owner(project));
    expect(response.status).toBe(200);
    expect(response.body.feedback_id).toBe(item.id);
    expect(response.body.total_mrr).toBe(210.5);
    expect(response.body.voters).toEqual([
      { user_id: 'voter-rich', email: 'rich@example.com', mrr: 200, created_at: expect.any(String) },
      { user_id: 'voter-poor', email: null, mrr: 10.5, created_at: expect.any(String) },
      // Registered without MRR, then never registered: both unknown, oldest vote first.
      { user_id: 'voter-creator', email: 'creator@example.com', mrr: null, created_at: expect.any(String) },
      { user_id: 'voter-unknown', email: null, mrr: null, created_at: expect.any(String) },
    ]);
  });

  it('an item without voters who have MRR has total_mrr null', async () => {
    const quiet = await createFeedback(server, project, { userId: 'nobody-registered' });
    const response = await server.request('GET', path(project, quiet.id, '/votes'), owner(project));
    expect(response.body).toMatchObject({ total_mrr: null, voters: [{ user_id: 'nobody-registered', mrr: null }] });
  });

  it('the owner’s reply is a Comment with is_admin, attributed to the account, and the client app reads it too', async () => {
    const sdkComment = await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      body: { content: 'When?', userId: 'voter-poor' },
    });
    expect(sdkComment.status).toBe(200);
    const reply = await server.request('POST', path(project, item.id, '/comments'), { ...owner(project), body: { content: 'Soon.' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: expect.any(String),
      feedback_id: item.id,
      content: 'Soon.',
      user_id: `account:${project.account.id}`,
      is_admin: true,
      created_at: expect.any(String),
    });
    const [stored] = await server.sql`select author_account_id, author_member_id from comments where id = ${reply.body.id}`;
    expect(stored).toEqual({ author_account_id: project.account.id, author_member_id: null });

    const asOwner = await server.request('GET', path(project, item.id, '/comments'), owner(project));
    expect(asOwner.status).toBe(200);
    expect(asOwner.body.map((c: { content: string }) => c.content)).toEqual(['When?', 'Soon.']);
    const asApp = await server.request('GET', `/api/v1/feedbacks/${item.id}/comments`, { apiKey: project.apiKey });
    expect(asApp.body).toEqual(asOwner.body);
    const read = await server.request('GET', path(project, item.id), owner(project));
    expect(read.body.comment_count).toBe(2);
  });

  it('a team member’s reply is attributed to the member', async () => {
    const member = await addMember(server, project);
    const reply = await server.request('POST', path(project, item.id, '/comments'), {
      bearer: member.adminToken,
      body: { content: 'On it.' },
    });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ user_id: `member:${member.id}`, is_admin: true });
    const [stored] = await server.sql`select author_account_id, author_member_id from comments where id = ${reply.body.id}`;
    expect(stored).toEqual({ author_account_id: project.account.id, author_member_id: member.id });
  });

  it('a reply is validated like a comment, and refused on an archived or suspended project', async () => {
    const post = (body: unknown, target = project, id = item.id) =>
      server.request('POST', path(target, id, '/comments'), { ...owner(target), body });
    expectError(await post({}), 400, 'content');
    expectError(await post({ content: '' }), 400, 'content');
    expectError(await post({ content: 'x'.repeat(2001) }), 400, 'content');

    const archived = await createProject(server, { plan: 'pro' });
    const archivedItem = await createFeedback(server, archived);
    expect(
      (await server.request('PATCH', `/api/v1/projects/${archived.id}`, { ...owner(archived), body: { archived: true } })).status,
    ).toBe(200);
    expect(await post({ content: 'x' }, archived, archivedItem.id)).toMatchObject({ status: 403, body: errorBody });
    // Reading stays allowed on an archived project.
    expect((await server.request('GET', path(archived, archivedItem.id, '/comments'), owner(archived))).status).toBe(200);

    await setSuspended(server, archived, true);
    expectError(await server.request('GET', path(archived, archivedItem.id), owner(archived)), 403);
  });
});

describe('GET /api/v1/projects/:id/feedbacks: search, sort by MRR, counts', () => {
  let project: TestProject;
  const titles = ['50% off', '500 off', 'a_b test', 'axb test', 'Dark MODE', 'no match'];
  const created: Record<string, string> = {};
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
    for (const title of titles) created[title] = (await createFeedback(server, project, { title, userId: `creator-${title}` })).id;
    await register(project, 'whale', 1000);
    await register(project, 'minnow', 1);
    await vote(project, created['axb test'] as string, 'minnow');
    await vote(project, created['no match'] as string, 'whale');
    const patch = (title: string, status: string) =>
      server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${created[title]}`, { ...owner(project), body: { status } });
    expect((await patch('500 off', 'approved')).status).toBe(200);
    expect((await patch('axb test', 'completed')).status).toBe(200);
    expect((await patch('Dark MODE', 'completed')).status).toBe(200);
  });

  const list = (query: string) => server.request('GET', `/api/v1/projects/${project.id}/feedbacks${query}`, owner(project));
  const counts = (query: string) => server.request('GET', `/api/v1/projects/${project.id}/feedbacks/counts${query}`, owner(project));
  const titlesOf = (body: { title: string }[]) => body.map((item) => item.title).sort();

  it('q finds titles containing the text in any letter case', async () => {
    expect(titlesOf((await list('?q=dark%20mode')).body)).toEqual(['Dark MODE']);
    expect(titlesOf((await list('?q=TEST')).body)).toEqual(['a_b test', 'axb test']);
  });

  it('% and _ in the term are matched as themselves, not as wildcards', async () => {
    expect(titlesOf((await list(`?q=${encodeURIComponent('%')}`)).body)).toEqual(['50% off']);
    expect(titlesOf((await list(`?q=${encodeURIComponent('0%')}`)).body)).toEqual(['50% off']);
    expect(titlesOf((await list('?q=a_b')).body)).toEqual(['a_b test']);
    expect(titlesOf((await list('?q=_')).body)).toEqual(['a_b test']);
    expect(titlesOf((await list(`?q=${encodeURIComponent('\\')}`)).body)).toEqual([]);
    // An empty search is no search.
    expect((await list('?q=')).body).toHaveLength(titles.length);
  });

  it('q combines with the other filters', async () => {
    expect(titlesOf((await list('?q=test&status=completed')).body)).toEqual(['axb test']);
    expect(titlesOf((await list('?q=off&status=pending')).body)).toEqual(['50% off']);
  });

  it('sort=mrr puts the items whose voters bring the most MRR first, items without MRR last', async () => {
    const response = await list('?sort=mrr');
    expect(response.status).toBe(200);
    const order = response.body.map((item: { title: string; total_mrr: number | null }) => [item.title, item.total_mrr]);
    expect(order.slice(0, 2)).toEqual([
      ['no match', 1000],
      ['axb test', 1],
    ]);
    expect(order.slice(2).every(([, mrr]: [string, number | null]) => mrr === null)).toBe(true);
  });

  it('the client app’s list keeps SPEC 4.1: no sort by MRR there', async () => {
    expectError(await server.request('GET', '/api/v1/feedbacks?sort=mrr', { apiKey: project.apiKey }), 400, 'sort');
  });

  it('counts answer every status, under the same filters as the list', async () => {
    const all = await counts('');
    expect(all.status).toBe(200);
    expect(all.body).toEqual({
      total: 6,
      by_status: { pending: 3, approved: 1, in_progress: 0, testflight: 0, completed: 2, rejected: 0 },
    });
    expect((await counts('?q=test')).body).toEqual({
      total: 2,
      by_status: { pending: 1, approved: 0, in_progress: 0, testflight: 0, completed: 1, rejected: 0 },
    });
    expect((await counts('?category=bug_report')).body.total).toBe(0);
  });

  it('counts leave merged items out unless includeMerged (also include_merged)', async () => {
    const merged = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${created['500 off']}/merge`, {
      ...owner(project),
      body: { intoId: created['50% off'] },
    });
    expect(merged.status).toBe(200);
    expect((await counts('')).body.total).toBe(5);
    expect((await counts('?includeMerged=true')).body.total).toBe(6);
    expect((await counts('?include_merged=1')).body.by_status.approved).toBe(1);
  });

  it('400 for a bad parameter, 403 and 404 like the list', async () => {
    expectError(await counts('?category=nope'), 400, 'category');
    expectError(await list('?sort=revenue'), 400, 'sort');
    expectError(await list(`?q=${'x'.repeat(201)}`), 400, 'q');
    const stranger = await createProject(server);
    expectError(await server.request('GET', `/api/v1/projects/${project.id}/feedbacks/counts`, owner(stranger)), 403);
    expectError(await server.request('GET', `/api/v1/projects/${MISSING_ID}/feedbacks/counts`, owner(project)), 404);
  });
});
