import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/secrets.js';
import { addMember, createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Credentials of the read-only ClickHouse interface (issue 29, docs/clickhouse-interface.md):
 * created, listed and revoked with the owning account's admin token or a Team member's; the
 * password is shown once and stored as its hash.
 */

const server = useTestServer({ workers: false });

const credentialsPath = (project: { id: string }) => `/api/v1/projects/${project.id}/clickhouse-credentials`;
const create = (project: TestProject, bearer = project.account.adminToken) => server.request('POST', credentialsPath(project), { bearer });
const list = (project: TestProject, bearer = project.account.adminToken) => server.request('GET', credentialsPath(project), { bearer });
const revoke = (project: TestProject, id: string, bearer = project.account.adminToken) =>
  server.request('DELETE', `${credentialsPath(project)}/${id}`, { bearer });

describe('ClickHouse credentials', () => {
  it('creates one with the owner’s token: 201, the password once, stored only as its hash', async () => {
    const project = await createProject(server);
    const r = await create(project);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      username: project.id,
      password: expect.stringMatching(/^fbch_[A-Za-z0-9_-]{43}$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      last_used_at: null,
    });
    const [stored] = await server.sql<{ password_hash: Buffer }[]>`
      select password_hash from clickhouse_credentials where id = ${r.body.id}`;
    expect(stored?.password_hash.equals(hashSecret(r.body.password))).toBe(true);
    const row = JSON.stringify(await server.sql`select * from clickhouse_credentials where id = ${r.body.id}`);
    expect(row).not.toContain(r.body.password);
  });

  it('lists them oldest first, without passwords, with last_used_at', async () => {
    const project = await createProject(server);
    const a = await create(project);
    const b = await create(project);
    const r = await list(project);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { id: a.body.id, username: project.id, created_at: a.body.created_at, last_used_at: null },
      { id: b.body.id, username: project.id, created_at: b.body.created_at, last_used_at: null },
    ]);
  });

  it('revokes one: 200 with it, then it is gone from the list; a second revoke is a 404', async () => {
    const project = await createProject(server);
    const a = await create(project);
    const b = await create(project);
    const r = await revoke(project, a.body.id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: a.body.id, username: project.id, created_at: a.body.created_at, last_used_at: null });
    expect((await list(project)).body.map((c: { id: string }) => c.id)).toEqual([b.body.id]);
    expect((await revoke(project, a.body.id)).status).toBe(404);
    expect((await revoke(project, 'not-a-uuid')).status).toBe(404);
  });

  it('another account’s token gets 403, and cannot revoke this project’s credential through its own project', async () => {
    const project = await createProject(server);
    const other = await createProject(server);
    const a = await create(project);
    expect((await create(project, other.account.adminToken)).status).toBe(403);
    expect((await list(project, other.account.adminToken)).status).toBe(403);
    expect((await revoke(project, a.body.id, other.account.adminToken)).status).toBe(403);
    expect((await revoke(other, a.body.id)).status).toBe(404);
    expect((await list(project)).body).toHaveLength(1);
  });

  it('a member’s token works on Team, and not after a downgrade', async () => {
    const project = await createProject(server, { plan: 'team' });
    const member = await addMember(server, project);
    const r = await create(project, member.adminToken);
    expect(r.status).toBe(201);
    expect((await list(project, member.adminToken)).body).toHaveLength(1);
    await setPlan(server, project.account, 'pro');
    expect((await list(project, member.adminToken)).status).toBe(401);
  });

  it('an API key, or no token, gets 401', async () => {
    const project = await createProject(server);
    expect((await server.request('POST', credentialsPath(project), { apiKey: project.apiKey })).status).toBe(401);
    expect((await server.request('GET', credentialsPath(project))).status).toBe(401);
  });
});
