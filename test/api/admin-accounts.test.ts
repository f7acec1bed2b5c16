import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addMember, createAccount, createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer({ workers: false });

const op = () => ({ bearer: server.operatorToken });

describe('GET /admin/accounts (operator)', () => {
  it('finds one account by email, in any letter case, with its project and token counts', async () => {
    const account = await createAccount(server, 'pro');
    await createProject(server, { account });
    const found = await server.request('GET', `/api/v1/admin/accounts?email=${encodeURIComponent(account.email.toUpperCase())}`, op());
    expect(found.status).toBe(200);
    expect(found.body).toEqual({
      accounts: [
        {
          id: account.id,
          email: account.email,
          plan: 'pro',
          created_at: expect.any(String),
          updated_at: expect.any(String),
          project_count: 1,
          admin_token_count: 1,
        },
      ],
      next_cursor: null,
    });
    const missing = await server.request('GET', `/api/v1/admin/accounts?email=nobody-${randomUUID()}@example.com`, op());
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ accounts: [], next_cursor: null });
  });

  it('pages through every account, oldest first, without repeating or skipping one', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createAccount(server));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await server.request('GET', `/api/v1/admin/accounts${query}`, op());
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.accounts.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.accounts.map((a: { id: string }) => a.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 1000);
    expect(new Set(seen).size).toBe(seen.length);
    const positions = created.map((a) => seen.indexOf(a.id));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  it('refuses bad parameters with 400 and callers without the operator token with 401', async () => {
    for (const query of ['?limit=0', '?limit=501', '?limit=x', '?cursor=bm9wZQ', '?email=a@example.com&cursor=abc', '?limit=1&limit=2']) {
      const response = await server.request('GET', `/api/v1/admin/accounts${query}`, op());
      expect(response.status, query).toBe(400);
      expect(response.body).toEqual({ error: true, reason: expect.any(String), message: expect.any(String) });
    }
    const account = await createAccount(server);
    const asOwner = await server.request('GET', '/api/v1/admin/accounts', { bearer: account.adminToken });
    expect(asOwner.status).toBe(401);
  });
});

describe('POST /admin/accounts/:id/tokens (operator)', () => {
  it('issues a new admin token; the old one keeps working unless revoked', async () => {
    const account = await createAccount(server);
    const issued = await server.request('POST', `/api/v1/admin/accounts/${account.id}/tokens`, op());
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body).toMatchObject({
      id: account.id,
      email: account.email,
      revoked_tokens: 0,
      admin_token: expect.stringMatching(/^fba_/),
    });
    expect((await server.request('GET', '/api/v1/projects', { bearer: issued.body.admin_token })).status).toBe(200);
    expect((await server.request('GET', '/api/v1/projects', { bearer: account.adminToken })).status).toBe(200);
  });

  it('with revokeOthers, the lost token stops at once and only the new one works', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const member = await addMember(server, project);
    await server.request('POST', `/api/v1/admin/accounts/${account.id}/tokens`, op());
    const issued = await server.request('POST', `/api/v1/admin/accounts/${account.id}/tokens`, { ...op(), body: { revoke_others: true } });
    expect(issued.status).toBe(200);
    expect(issued.body.revoked_tokens).toBe(2);
    expect((await server.request('GET', '/api/v1/projects', { bearer: account.adminToken })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/projects', { bearer: issued.body.admin_token })).status).toBe(200);
    // A team member's own token is revoked by removing the member, not here.
    expect((await server.request('GET', '/api/v1/projects', { bearer: member.adminToken })).status).toBe(200);
    const listed = await server.request('GET', `/api/v1/admin/accounts?email=${encodeURIComponent(account.email)}`, op());
    expect(listed.body.accounts[0].admin_token_count).toBe(1);
  });

  it('answers 404 for an unknown account, 400 for a bad body, 401 without the operator token', async () => {
    expect((await server.request('POST', `/api/v1/admin/accounts/${randomUUID()}/tokens`, op())).status).toBe(404);
    expect((await server.request('POST', '/api/v1/admin/accounts/not-a-uuid/tokens', op())).status).toBe(404);
    const account = await createAccount(server);
    const bad = await server.request('POST', `/api/v1/admin/accounts/${account.id}/tokens`, { ...op(), body: { revokeOthers: 'yes' } });
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toMatch(/^revokeOthers:/);
    expect((await server.request('POST', `/api/v1/admin/accounts/${account.id}/tokens`, { bearer: account.adminToken })).status).toBe(401);
  });
});
