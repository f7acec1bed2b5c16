import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { errorBody, MISSING_ID } from '../helpers/expect.js';
import { addMember, createAccount, createProject, setPlan, setSuspended, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Team members (SPEC 8.2: Team tier only). A member belongs to a project and gets its own admin
 * token of the project's account, which acts as the account on every admin route.
 */

const server = useTestServer();

const uniqueEmail = (prefix = 'member') => `${prefix}-${randomUUID()}@example.com`;
const membersPath = (project: { id: string }) => `/api/v1/projects/${project.id}/members`;

function postMember(project: TestProject, body: unknown, bearer = project.account.adminToken) {
  return server.request('POST', membersPath(project), { bearer, body });
}

function listMembers(project: TestProject, bearer = project.account.adminToken) {
  return server.request('GET', membersPath(project), { bearer });
}

function deleteMember(project: TestProject, memberId: string, bearer = project.account.adminToken) {
  return server.request('DELETE', `${membersPath(project)}/${memberId}`, { bearer });
}

describe('POST /api/v1/projects/:id/members', () => {
  it('adds a member on the Team plan and shows its admin token once', async () => {
    const project = await createProject(server, { plan: 'team' });
    const email = uniqueEmail();
    const response = await postMember(project, { email });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project_id: project.id,
      email,
      created_at: expect.any(String),
      admin_token: expect.stringMatching(/^fba_[A-Za-z0-9_-]{43}$/),
    });
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(response.body.admin_token).not.toBe(project.account.adminToken);
    // The token is stored as a hash, tied to the member.
    const tokens = await server.sql<{ token_hash: Buffer; account_id: string }[]>`
      select token_hash, account_id from admin_tokens where member_id = ${response.body.id}`;
    expect(tokens).toHaveLength(1);
    expect(tokens[0]?.account_id).toBe(project.account.id);
    expect(tokens[0]?.token_hash.toString('utf8')).not.toContain(response.body.admin_token);
  });

  it('trims the email and keeps its letter case', async () => {
    const project = await createProject(server, { plan: 'team' });
    const email = `Alice.${randomUUID()}@Example.com`;
    const response = await postMember(project, { email: `  ${email}\n` });
    expect(response.status).toBe(200);
    expect(response.body.email).toBe(email);
  });

  it.each(['free', 'pro'] as const)('402 with the SPEC error body on the %s plan, and nothing is stored', async (plan) => {
    const project = await createProject(server, { plan });
    const response = await postMember(project, { email: uniqueEmail() });
    expect(response.status).toBe(402);
    expect(response.body).toEqual({
      error: true,
      reason: 'team members require the Team plan',
      message: 'team members require the Team plan',
    });
    // The plan is checked before the body: an invalid one is a 402 too.
    expect((await postMember(project, { email: 'nope' })).status).toBe(402);
    const [{ count } = { count: -1 }] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from project_members where project_id = ${project.id}`;
    expect(count).toBe(0);
  });

  it.each([
    ['not an email', { email: 'not-an-email' }],
    ['an empty email', { email: '' }],
    ['only spaces', { email: '   ' }],
    ['a missing email', {}],
    ['a null email', { email: null }],
    ['a number', { email: 42 }],
    ['an email over 320 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(260)}.com` }],
  ])('400 naming email for %s', async (_label, body) => {
    const project = await createProject(server, { plan: 'team' });
    const response = await postMember(project, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringMatching(/^email: /), message: expect.stringMatching(/^email: /) });
  });

  it('400 for a body that is not a JSON object', async () => {
    const project = await createProject(server, { plan: 'team' });
    for (const rawBody of ['[]', '"a@example.com"', '{']) {
      const response = await server.request('POST', membersPath(project), { bearer: project.account.adminToken, rawBody });
      expect(response.status, rawBody).toBe(400);
      expect(response.body).toEqual(errorBody);
    }
  });

  it('409 for an email the project already has, in any letter case; other projects may have it', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const email = uniqueEmail('Bob');
    expect((await postMember(project, { email })).status).toBe(200);
    for (const again of [email, email.toUpperCase(), email.toLowerCase(), ` ${email} `]) {
      const duplicate = await postMember(project, { email: again });
      expect(duplicate.status, again).toBe(409);
      expect(duplicate.body).toEqual(errorBody);
    }
    expect((await postMember(other, { email })).status).toBe(200);
    expect((await listMembers(project)).body).toHaveLength(1);
  });

  it('401 without a token or with an unknown one', async () => {
    const project = await createProject(server, { plan: 'team' });
    const bare = await server.request('POST', membersPath(project), { body: { email: uniqueEmail() } });
    expect(bare.status).toBe(401);
    expect(bare.body).toEqual(errorBody);
    const unknown = await postMember(project, { email: uniqueEmail() }, 'fba_not_a_token');
    expect(unknown.status).toBe(401);
  });

  it('403 on another account’s project, 404 on an unknown or malformed project id', async () => {
    const project = await createProject(server, { plan: 'team' });
    const stranger = await createAccount(server, 'team');
    const response = await postMember(project, { email: uniqueEmail() }, stranger.adminToken);
    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorBody);
    for (const id of [MISSING_ID, 'not-a-uuid']) {
      const missing = await server.request('POST', `/api/v1/projects/${id}/members`, {
        bearer: project.account.adminToken,
        body: { email: uniqueEmail() },
      });
      expect(missing.status, id).toBe(404);
      expect(missing.body).toEqual(errorBody);
    }
  });

  it('403 on a suspended project (every member route); an archived project is allowed', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    await setSuspended(server, project, true);
    try {
      for (const response of [
        await postMember(project, { email: uniqueEmail() }),
        await listMembers(project),
        await deleteMember(project, member.id),
      ]) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual({ error: true, reason: 'project is suspended', message: 'project is suspended' });
      }
    } finally {
      await setSuspended(server, project, false);
    }
    const archived = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { archived: true },
    });
    expect(archived.status).toBe(200);
    expect((await postMember(project, { email: uniqueEmail() })).status).toBe(200);
    expect((await listMembers(project)).body).toHaveLength(2);
  });
});

describe('GET /api/v1/projects/:id/members', () => {
  it('lists the project’s members oldest first, without tokens', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const first = await addMember(server, project);
    const second = await addMember(server, project);
    await addMember(server, other);
    const response = await listMembers(project);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { id: first.id, project_id: project.id, email: first.email, created_at: expect.any(String) },
      { id: second.id, project_id: project.id, email: second.email, created_at: expect.any(String) },
    ]);
  });

  it('answers an empty list on any plan', async () => {
    for (const plan of ['free', 'pro', 'team'] as const) {
      const project = await createProject(server, { plan });
      const response = await listMembers(project);
      expect(response.status, plan).toBe(200);
      expect(response.body).toEqual([]);
    }
  });

  it('403 on another account’s project', async () => {
    const project = await createProject(server, { plan: 'team' });
    const stranger = await createAccount(server, 'team');
    const response = await listMembers(project, stranger.adminToken);
    expect(response.status).toBe(403);
    expect(response.body).toEqual(errorBody);
  });
});

describe('DELETE /api/v1/projects/:id/members/:memberId', () => {
  it('removes the member, answers it, and revokes its token', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const kept = await addMember(server, project);
    expect((await server.request('GET', '/api/v1/projects', { bearer: member.adminToken })).status).toBe(200);

    const response = await deleteMember(project, member.id);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: member.id, project_id: project.id, email: member.email, created_at: expect.any(String) });

    const revoked = await server.request('GET', '/api/v1/projects', { bearer: member.adminToken });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toEqual({ error: true, reason: 'invalid admin token', message: 'invalid admin token' });
    const [{ count } = { count: -1 }] = await server.sql<{ count: number }[]>`
      select count(*)::int as count from admin_tokens where member_id = ${member.id}`;
    expect(count).toBe(0);
    expect((await listMembers(project)).body.map((m: { id: string }) => m.id)).toEqual([kept.id]);
    // The other member and the owner are untouched.
    expect((await server.request('GET', '/api/v1/projects', { bearer: kept.adminToken })).status).toBe(200);
    expect((await deleteMember(project, member.id)).status).toBe(404);
  });

  it('404 for an unknown or malformed member id, and for a member of another project', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const elsewhere = await addMember(server, other);
    for (const id of [MISSING_ID, 'not-a-uuid', elsewhere.id]) {
      const response = await deleteMember(project, id);
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual({ error: true, reason: 'member not found', message: 'member not found' });
    }
    // Still a member of its own project, its token still valid.
    expect((await listMembers(other)).body).toHaveLength(1);
    expect((await server.request('GET', '/api/v1/projects', { bearer: elsewhere.adminToken })).status).toBe(200);
  });

  it('403 on another account’s project, and the member stays', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const stranger = await createAccount(server, 'team');
    const response = await deleteMember(project, member.id, stranger.adminToken);
    expect(response.status).toBe(403);
    expect((await listMembers(project)).body).toHaveLength(1);
  });

  it('a member’s token may remove that member, which revokes the token', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    expect((await deleteMember(project, member.id, member.adminToken)).status).toBe(200);
    expect((await listMembers(project, member.adminToken)).status).toBe(401);
  });
});

describe('a member’s admin token', () => {
  it('acts as the account on every project of the account, and gets 403 on other accounts’ projects', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const sibling = await createProject(server, { account });
    const member = await addMember(server, project);
    const bearer = member.adminToken;

    const projects = await server.request('GET', '/api/v1/projects', { bearer });
    expect(projects.status).toBe(200);
    expect(projects.body.map((p: { id: string }) => p.id).sort()).toEqual([project.id, sibling.id].sort());
    expect((await server.request('GET', `/api/v1/projects/${sibling.id}`, { bearer })).status).toBe(200);
    expect((await server.request('GET', `/api/v1/projects/${sibling.id}/feedbacks`, { bearer })).status).toBe(200);
    expect((await server.request('GET', `/api/v1/projects/${sibling.id}/integrations`, { bearer })).status).toBe(200);
    expect((await listMembers(sibling, bearer)).status).toBe(200);
    // A project it creates belongs to the account.
    const created = await server.request('POST', '/api/v1/projects', { bearer, body: { name: 'by a member' } });
    expect(created.status).toBe(200);
    expect((await server.request('GET', `/api/v1/projects/${created.body.id}`, { bearer: account.adminToken })).status).toBe(200);

    const foreign = await createProject(server, { plan: 'team' });
    for (const path of [
      `/api/v1/projects/${foreign.id}`,
      `/api/v1/projects/${foreign.id}/members`,
      `/api/v1/projects/${foreign.id}/feedbacks`,
    ]) {
      const response = await server.request('GET', path, { bearer });
      expect(response.status, path).toBe(403);
      expect(response.body).toEqual(errorBody);
    }
    expect((await postMember(foreign, { email: uniqueEmail() }, bearer)).status).toBe(403);
  });

  it('cannot add members or remove other members: no token it mints could outlive its removal', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const member = await addMember(server, project);
    const other = await addMember(server, project);
    const added = await postMember(project, { email: uniqueEmail() }, member.adminToken);
    expect(added.status).toBe(403);
    expect(added.body).toEqual({
      error: true,
      reason: expect.stringContaining("account owner's admin token"),
      message: expect.stringContaining("account owner's admin token"),
    });
    const removed = await deleteMember(project, other.id, member.adminToken);
    expect(removed.status).toBe(403);
    expect((await listMembers(project)).body).toHaveLength(2);
    const tokens = await server.sql<{ n: number }[]>`
      select count(*)::int as n from admin_tokens where account_id = ${account.id} and member_id is not null`;
    expect(tokens[0]?.n).toBe(2);
    // The owner removes the member: it has no other way in.
    expect((await deleteMember(project, member.id)).status).toBe(200);
    expect((await server.request('GET', '/api/v1/projects', { bearer: member.adminToken })).status).toBe(401);
  });

  it('is not the operator token', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const response = await server.request('POST', '/api/v1/admin/accounts', { bearer: member.adminToken, body: { email: uniqueEmail() } });
    expect(response.status).toBe(401);
  });
});

describe('downgrade below Team', () => {
  it('keeps and lists the members, refuses new ones, and refuses member tokens until the plan is Team again', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const member = await addMember(server, project);
    const removable = await addMember(server, project);

    for (const plan of ['pro', 'free'] as const) {
      await setPlan(server, account, plan);
      const listed = await listMembers(project);
      expect(listed.status, plan).toBe(200);
      expect(listed.body.map((m: { id: string }) => m.id)).toEqual([member.id, removable.id]);
      expect((await postMember(project, { email: uniqueEmail() })).status).toBe(402);

      for (const path of ['/api/v1/projects', `/api/v1/projects/${project.id}`, membersPath(project)]) {
        const refused = await server.request('GET', path, { bearer: member.adminToken });
        expect(refused.status, `${plan} ${path}`).toBe(401);
        expect(refused.body).toEqual({
          error: true,
          reason: 'member tokens require the Team plan',
          message: 'member tokens require the Team plan',
        });
      }
      // The owner's token is unaffected.
      expect((await server.request('GET', '/api/v1/projects', { bearer: account.adminToken })).status).toBe(200);
    }

    // Removing is allowed on any plan (it only takes access away).
    const removed = await deleteMember(project, removable.id);
    expect(removed.status).toBe(200);

    await setPlan(server, account, 'team');
    expect((await server.request('GET', `/api/v1/projects/${project.id}`, { bearer: member.adminToken })).status).toBe(200);
    expect((await server.request('GET', '/api/v1/projects', { bearer: removable.adminToken })).status).toBe(401);
    expect((await listMembers(project)).body.map((m: { id: string }) => m.id)).toEqual([member.id]);
  });
});
