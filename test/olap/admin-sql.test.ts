import { describe, expect, it } from 'vitest';
import { createAccount, createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const sql = (query: string, params?: Record<string, unknown>, bearer = server.operatorToken) =>
  server.request('POST', '/api/v1/admin/sql', { bearer, body: { query, ...(params ? { params } : {}) } });

describe('POST /api/v1/admin/sql (operator): one read-only ClickHouse query', () => {
  it('answers columns and rows, with {name:Type} parameters', async () => {
    const project = await createProject(server, { plan: 'pro' });
    await server.request('POST', '/api/v1/events/batch', {
      apiKey: project.apiKey,
      body: {
        events: [
          { eventName: 'a', userId: 'u1' },
          { eventName: 'a', userId: 'u2' },
          { eventName: 'b', userId: 'u1' },
        ],
      },
    });
    await server.eventsVisible();
    const r = await sql('SELECT event_name, count() AS n FROM events WHERE project_id = {p:UUID} GROUP BY event_name ORDER BY event_name', {
      p: project.id,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.columns).toEqual([
      { name: 'event_name', type: 'LowCardinality(String)' },
      { name: 'n', type: 'UInt64' },
    ]);
    expect(r.body.rows.map((row: any) => [row.event_name, Number(row.n)])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(r.body).toMatchObject({ row_count: 2, truncated: false, elapsed_ms: expect.any(Number) });
  });

  it('cuts results at 10,000 rows and says so', async () => {
    const r = await sql('SELECT number FROM numbers(25000)');
    expect(r.status).toBe(200);
    expect(r.body.rows).toHaveLength(10_000);
    expect(r.body).toMatchObject({ row_count: 10_000, truncated: true });
  });

  it.each([
    ['a second statement', 'SELECT 1; DROP TABLE events'],
    ['a write', 'INSERT INTO events (event_name) VALUES (1)'],
    ['DDL', 'DROP TABLE events'],
    ['reading a server file', "SELECT * FROM file('/etc/hostname', 'LineAsString')"],
    ['lifting readonly from inside', "SELECT * FROM file('/etc/hostname', 'LineAsString') SETTINGS readonly = 0"],
    ['any SETTINGS clause', 'SELECT 1 SETTINGS max_threads = 1'],
    ['invalid SQL', 'SELEC 1'],
  ])('400 for %s, and nothing changes', async (_, query) => {
    const r = await sql(query);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toEqual({ error: true, reason: expect.stringMatching(/^query: /), message: expect.stringMatching(/^query: /) });
    const still = await sql('SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', {
      t: 'events',
    });
    expect(Number(still.body.rows[0].n)).toBe(1);
  });

  it('a parameter value over 256 KiB is a 400 naming it (was a 500: chDB parses `SET param_…` under max_query_size); one just under it runs', async () => {
    const uuids = (n: number) => `[${Array.from({ length: n }, () => `'${crypto.randomUUID()}'`).join(',')}]`;
    const query = 'SELECT length({ids:Array(UUID)}) AS n';
    const over = await sql(query, { ids: uuids(7_000) });
    expect(over.status, JSON.stringify(over.body)).toBe(400);
    expect(over.body).toEqual({
      error: true,
      reason: expect.stringMatching(/^params\.ids: must be at most 262144 characters/),
      message: expect.stringMatching(/^params\.ids: must be at most 262144 characters/),
    });
    // 6,600 UUIDs: 257,400 characters, past 256 KiB once quoted into the SET statement.
    const under = await sql(query, { ids: uuids(6_600) });
    expect(under.status, JSON.stringify(under.body)).toBe(200);
    expect(Number(under.body.rows[0].n)).toBe(6_600);
  });

  it('400 for a missing or empty query', async () => {
    for (const body of [{}, { query: '' }, { query: 7 }]) {
      const r = await server.request('POST', '/api/v1/admin/sql', { bearer: server.operatorToken, body });
      expect(r.status).toBe(400);
      expect(r.body.reason).toContain('query');
    }
  });

  it('401 without the operator token; an account admin token is not one', async () => {
    expect((await server.request('POST', '/api/v1/admin/sql', { body: { query: 'SELECT 1' } })).status).toBe(401);
    const account = await createAccount(server, 'team');
    expect((await sql('SELECT 1', undefined, account.adminToken)).status).toBe(401);
  });

  it('leaves the service able to write: readonly applies to that query only', async () => {
    await sql('SELECT 1');
    const project = await createProject(server, { plan: 'pro' });
    const tracked = await server.request('POST', '/api/v1/events/track', {
      apiKey: project.apiKey,
      body: { eventName: 'after_sql', userId: 'u' },
    });
    expect(tracked.status).toBe(200);
    await server.eventsVisible();
  });
});
