import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createSql, type Sql } from '../../src/oltp/db.js';
import { ProjectKeyCache } from '../../src/oltp/projects.cache.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { useTestServer } from '../helpers/server.js';

/*
 * API-key lookups are remembered in process (src/oltp/projects.cache.ts). These tests prove that
 * they are (a change that bypasses the notification is not seen at once), and that every change
 * that matters reaches every process at once: the process that made it, another process with its
 * own LISTEN connection, and a change made directly in PostgreSQL.
 */

/** Polls until `check` holds, at most `timeoutMs`; returns how long it took. */
const within = (timeoutMs: number, check: () => Promise<boolean>) => eventually(`a change seen within ${timeoutMs} ms`, timeoutMs, check);

/** Runs `statement` with triggers off, so no NOTIFY reaches the caches (superuser only). */
async function withoutNotification(sql: Sql, statement: (tx: Sql) => Promise<unknown>): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await statement(tx as unknown as Sql);
  });
}

describe('API-key lookups are remembered in process', () => {
  const server = useTestServer({ workers: false, env: { API_KEY_CACHE_SECONDS: '1' } });
  const status = async (p: TestProject) => (await server.request('GET', '/api/v1/feedbacks', { apiKey: p.apiKey })).status;

  it('a change that bypasses the notification is seen only after API_KEY_CACHE_SECONDS', async () => {
    const project = await createProject(server);
    expect(await status(project)).toBe(200);
    await withoutNotification(server.sql, (tx) => tx`update projects set suspended = true where id = ${project.id}`);
    // Remembered: PostgreSQL is not asked again within the TTL.
    expect(await status(project)).toBe(200);
    // The TTL bounds how long a missed change can go unseen.
    const waited = await within(3_000, async () => (await status(project)) === 403);
    expect(waited).toBeLessThan(1_500);
  });
});

describe('changes reach every process at once (API_KEY_CACHE_SECONDS=3600)', () => {
  const server = useTestServer({ workers: false, env: { API_KEY_CACHE_SECONDS: '3600' } });
  let otherSql: Sql;
  let otherKeys: ProjectKeyCache;
  let other: Server;
  let otherUrl: string;

  beforeAll(async () => {
    // What a second process has of its own: a PostgreSQL pool and its LISTEN connection.
    const url = server.services.config.databaseUrl as string;
    otherSql = createSql(url, { max: 2 });
    otherKeys = new ProjectKeyCache(otherSql, 3_600_000);
    await otherKeys.listen();
    other = buildApp({ ...server.services, sql: otherSql, projectKeys: otherKeys, operatorToken: server.operatorToken }).listen(
      0,
      '127.0.0.1',
    );
    await new Promise((resolve) => other.once('listening', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    stopWhenDone(async () => {
      other?.closeAllConnections();
      await new Promise((resolve) => other?.close(resolve));
      await otherKeys?.close();
      await otherSql?.end();
    });
  });

  const status = async (p: TestProject) => (await server.request('GET', '/api/v1/feedbacks', { apiKey: p.apiKey })).status;

  it('a change made directly in PostgreSQL (NOTIFY) is seen at once: suspension, rotation, plan', async () => {
    const p = await createProject(server);
    expect(await status(p)).toBe(200);
    await server.sql`update projects set suspended = true where id = ${p.id}`;
    expect(await within(500, async () => (await status(p)) === 403)).toBeLessThan(500);
    await server.sql`update projects set suspended = false where id = ${p.id}`;
    expect(await within(500, async () => (await status(p)) === 200)).toBeLessThan(500);

    await server.sql`update projects set api_key_hash = ${hashSecret(`${p.apiKey}-rotated`)} where id = ${p.id}`;
    expect(await within(500, async () => (await status(p)) === 401)).toBeLessThan(500);

    const q = await createProject(server);
    const scope = async () => (await server.request('GET', '/api/v1/metrics/summary', { apiKey: q.apiKey })).body.event_scope as string;
    expect(await scope()).toBe('predefined_only');
    await server.sql`update accounts set plan = 'pro' where id = ${q.account.id}`;
    expect(await within(500, async () => (await scope()) === 'all')).toBeLessThan(500);
  });

  it('the process that makes a change sees it in its very next request', async () => {
    const p = await createProject(server, { plan: 'pro' });
    expect(await status(p)).toBe(200);
    const rotated = await server.request('POST', `/api/v1/projects/${p.id}/api-keys`, { bearer: p.account.adminToken });
    expect(rotated.status).toBe(200);
    expect(await status(p)).toBe(401);
    expect(await status({ ...p, apiKey: rotated.body.api_key })).toBe(200);

    const archived = await server.request('PATCH', `/api/v1/projects/${p.id}`, { bearer: p.account.adminToken, body: { archived: true } });
    expect(archived.status).toBe(200);
    const created = await server.request('POST', '/api/v1/feedbacks', {
      apiKey: rotated.body.api_key,
      body: { title: 't', description: 'd', category: 'other', userId: 'u' },
    });
    expect(created.status).toBe(403);

    const suspended = await server.request('PATCH', `/api/v1/admin/projects/${p.id}`, {
      bearer: server.operatorToken,
      body: { suspended: true },
    });
    expect(suspended.status).toBe(200);
    expect(await status({ ...p, apiKey: rotated.body.api_key })).toBe(403);
  });
  it('a key rotated or a project suspended through one process stops working on the other at once', async () => {
    const p = await createProject(server, { plan: 'pro' });
    const onOther = async (apiKey: string) => (await fetch(`${otherUrl}/api/v1/feedbacks`, { headers: { 'x-api-key': apiKey } })).status;
    expect(await onOther(p.apiKey)).toBe(200); // now remembered there, for an hour
    const rotated = await server.request('POST', `/api/v1/projects/${p.id}/api-keys`, { bearer: p.account.adminToken });
    expect(rotated.status).toBe(200);
    expect(await within(500, async () => (await onOther(p.apiKey)) === 401)).toBeLessThan(500);
    expect(await onOther(rotated.body.api_key)).toBe(200);

    const suspended = await server.request('PATCH', `/api/v1/admin/projects/${p.id}`, {
      bearer: server.operatorToken,
      body: { suspended: true },
    });
    expect(suspended.status).toBe(200);
    expect(await within(500, async () => (await onOther(rotated.body.api_key)) === 403)).toBeLessThan(500);
  });
});
