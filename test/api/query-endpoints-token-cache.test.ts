import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { hashSecret } from '../../src/core/secrets.js';
import { createSql, type Sql } from '../../src/oltp/db.js';
import { ProjectKeyCache } from '../../src/oltp/projects.cache.js';
import { EndpointLookupCache } from '../../src/oltp/saved-query-endpoints.cache.js';
import { eventually } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/*
 * The lookup of a published saved query (its token's hash, its text, its project's plan) is
 * remembered in process (src/oltp/saved-query-endpoints.cache.ts, docs/project-sql.md
 * "Endpoints"). These tests prove that it is (a change that bypasses the notification is not seen
 * at once), and the bounds the docs state for a revoked token: the process that rotates or
 * unpublishes refuses the old token on its very next call; another process, with its own LISTEN
 * connection, within milliseconds, as for a change made directly in PostgreSQL; and a change no
 * notification announced, after API_KEY_CACHE_SECONDS at most.
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

type Endpoint = { id: string; token: string; queryId: string };

/** A saved query of `project`, published (a cache time makes a call cost no engine time). */
async function published(server: TestServer, project: TestProject, text: string, cacheSeconds = 3600): Promise<Endpoint> {
  const saved = await server.request('POST', `/api/v1/projects/${project.id}/saved-queries`, {
    bearer: project.account.adminToken,
    body: { name: 'q', sql: text },
  });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
  const r = await server.request('POST', `/api/v1/projects/${project.id}/saved-queries/${saved.body.id}/endpoint`, {
    bearer: project.account.adminToken,
    body: { cacheSeconds },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { id: r.body.id, token: r.body.token, queryId: saved.body.id };
}

const callAt = async (base: string, endpoint: Endpoint, token = endpoint.token) =>
  fetch(`${base}/api/v1/q/${endpoint.id}`, { headers: { authorization: `Bearer ${token}` } });
const statusAt = async (base: string, endpoint: Endpoint, token?: string) => (await callAt(base, endpoint, token)).status;

describe('endpoint lookups are remembered in process', () => {
  const server = useTestServer({ workers: false, env: { API_KEY_CACHE_SECONDS: '1' } });

  it('a change that bypasses the notification is seen only after API_KEY_CACHE_SECONDS', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const endpoint = await published(server, project, 'SELECT 1 AS one');
    expect(await statusAt(server.url, endpoint)).toBe(200);
    await withoutNotification(
      server.sql,
      (tx) => tx`update saved_query_endpoints set token_hash = ${hashSecret('fbq_other')} where id = ${endpoint.id}`,
    );
    // Remembered: PostgreSQL is not asked again within the TTL, so the old token still works.
    expect(await statusAt(server.url, endpoint)).toBe(200);
    // The TTL bounds how long a missed change can go unseen.
    const waited = await within(3_000, async () => (await statusAt(server.url, endpoint)) === 401);
    expect(waited).toBeLessThan(1_500);
  });
});

describe('a revoked token stops working in every process at once (API_KEY_CACHE_SECONDS=3600)', () => {
  const server = useTestServer({ workers: false, env: { API_KEY_CACHE_SECONDS: '3600' } });
  let otherSql: Sql;
  let otherUrl: string;

  beforeAll(async () => {
    // What a second API process has of its own: a PostgreSQL pool, its caches and their LISTEN connection.
    otherSql = createSql(server.services.config.databaseUrl as string, { max: 2 });
    const projectKeys = new ProjectKeyCache(otherSql, 3_600_000);
    const endpointLookups = new EndpointLookupCache(otherSql, 3_600_000);
    await projectKeys.listen();
    await endpointLookups.listen();
    const other: Server = buildApp({
      ...server.services,
      sql: otherSql,
      projectKeys,
      endpointLookups,
      operatorToken: server.operatorToken,
    }).listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    stopWhenDone(async () => {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
      await endpointLookups.close();
      await projectKeys.close();
      await otherSql.end();
    });
  });

  it('the process that rotates or unpublishes refuses the old token on its very next call', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const endpoint = await published(server, project, 'SELECT 2 AS two');
    expect(await statusAt(server.url, endpoint)).toBe(200); // now remembered here, for an hour
    const rotated = await server.request('POST', `/api/v1/projects/${project.id}/saved-queries/${endpoint.queryId}/endpoint/token`, {
      bearer: project.account.adminToken,
    });
    expect(rotated.status).toBe(200);
    expect(await statusAt(server.url, endpoint)).toBe(401);
    expect(await statusAt(server.url, endpoint, rotated.body.token)).toBe(200);
    const removed = await server.request('DELETE', `/api/v1/projects/${project.id}/saved-queries/${endpoint.queryId}/endpoint`, {
      bearer: project.account.adminToken,
    });
    expect(removed.status).toBe(200);
    expect(await statusAt(server.url, endpoint, rotated.body.token)).toBe(404);
  });

  it('a token rotated or an endpoint unpublished through one process stops working on the other within milliseconds', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const endpoint = await published(server, project, 'SELECT 3 AS three');
    expect(await statusAt(otherUrl, endpoint)).toBe(200); // now remembered there, for an hour
    const rotated = await server.request('POST', `/api/v1/projects/${project.id}/saved-queries/${endpoint.queryId}/endpoint/token`, {
      bearer: project.account.adminToken,
    });
    expect(rotated.status).toBe(200);
    expect(await within(500, async () => (await statusAt(otherUrl, endpoint)) === 401)).toBeLessThan(500);
    expect(await statusAt(otherUrl, endpoint, rotated.body.token)).toBe(200);
    // Republishing issues a new token too.
    const republished = await server.request('POST', `/api/v1/projects/${project.id}/saved-queries/${endpoint.queryId}/endpoint`, {
      bearer: project.account.adminToken,
      body: { cacheSeconds: 3600 },
    });
    expect(republished.status).toBe(200);
    expect(await within(500, async () => (await statusAt(otherUrl, endpoint, rotated.body.token)) === 401)).toBeLessThan(500);
    await server.request('DELETE', `/api/v1/projects/${project.id}/saved-queries/${endpoint.queryId}/endpoint`, {
      bearer: project.account.adminToken,
    });
    expect(await within(500, async () => (await statusAt(otherUrl, endpoint, republished.body.token)) === 404)).toBeLessThan(500);
  });

  it('a change made directly in PostgreSQL (NOTIFY) is seen at once: the token, the query’s text, suspension, the saved query deleted', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const endpoint = await published(server, project, 'SELECT 4 AS four', 0);
    const answer = async (base: string) => ((await (await callAt(base, endpoint)).json()) as { data: unknown[] }).data;
    expect(await answer(otherUrl)).toEqual([{ four: 4 }]);
    await server.sql`update saved_queries set sql = 'SELECT 5 AS five' where id = ${endpoint.queryId}`;
    for (const base of [server.url, otherUrl]) {
      expect(await within(500, async () => JSON.stringify(await answer(base)) === '[{"five":5}]')).toBeLessThan(500);
    }
    await server.sql`update projects set suspended = true where id = ${project.id}`;
    for (const base of [server.url, otherUrl])
      expect(await within(500, async () => (await statusAt(base, endpoint)) === 403)).toBeLessThan(500);
    await server.sql`update projects set suspended = false where id = ${project.id}`;
    for (const base of [server.url, otherUrl])
      expect(await within(500, async () => (await statusAt(base, endpoint)) === 200)).toBeLessThan(500);
    await server.sql`update saved_query_endpoints set token_hash = ${hashSecret('fbq_other')} where id = ${endpoint.id}`;
    for (const base of [server.url, otherUrl])
      expect(await within(500, async () => (await statusAt(base, endpoint)) === 401)).toBeLessThan(500);
    await server.sql`delete from saved_queries where id = ${endpoint.queryId}`;
    for (const base of [server.url, otherUrl]) {
      expect(await within(500, async () => (await statusAt(base, endpoint, 'fbq_other')) === 404)).toBeLessThan(500);
    }
  });
});
