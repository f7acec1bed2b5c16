/**
 * `npm run bench:endpoints`: the cost of a published saved query (docs/project-sql.md, "Endpoints").
 * The service is wired as `npm start` wires it (createServices, migrations, buildApp) in this
 * process, with embedded chDB, on BENCH_EVENTS events (default 200,000) of one Team project; one
 * saved query (events by name over a parameter) is published twice, with and without a cache.
 *
 * - the query's own time: the same SQL through the project SQL lane directly (projectQueries.run),
 *   no HTTP, no endpoint;
 * - uncached: GET /api/v1/q/:id of the endpoint without a cache, a new parameter value each call;
 * - cached: GET of the cached endpoint with one value, after a first call filled the cache: no
 *   engine, and no PostgreSQL either once the endpoint's lookup is remembered
 *   (oltp/saved-query-endpoints.cache.ts; BENCH_LOOKUP_CACHE=0 looks it up on every call, as before);
 * - the floor: GET /healthz of the same app, which reads no database, under the same load.
 *
 * Each is called BENCH_CALLS times (default 200); the query alone and uncached in turn, call by
 * call, and so are cached and the floor, so that the shared machine's changing load weighs on both
 * of a pair alike. p50, p95 and mean in ms; the load average at the start and the end. The
 * endpoint's overhead is uncached minus the query's own time, by percentile, as the bench's client
 * sees it and as the server spends it (from the request's arrival to the answer written).
 *
 * PostgreSQL: a fresh database on DATABASE_URL's server (required); dropped at the end.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { buildApp } from '../src/api/app.js';
import { projectQueries } from '../src/api/shared/project-queries.js';
import { projectSqlScope } from '../src/api/shared/project-sql-scope.js';
import { loadConfig } from '../src/core/config.js';
import { ADMIN_TOKEN_PREFIX, API_KEY_PREFIX, hashSecret, newSecret } from '../src/core/secrets.js';
import { createAccount } from '../src/oltp/accounts.repo.js';
import { createSql } from '../src/oltp/db.js';
import { createSavedQuery } from '../src/oltp/insights.repo.js';
import { createProject, findProject } from '../src/oltp/projects.repo.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 200_000);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const DAY = 24 * 3600 * 1000;
const log = (line: string) => process.stdout.write(`${line}\n`);

const QUERY =
  'SELECT event_name, count() AS n, uniq(user_id) AS users FROM events WHERE user_id != {skip:String} GROUP BY event_name ORDER BY n DESC';

function figures(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length);
  return { p50: Number(at(0.5).toFixed(2)), p95: Number(at(0.95).toFixed(2)), mean: Number(mean.toFixed(2)) };
}

async function main() {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('bench:endpoints needs DATABASE_URL (a PostgreSQL server where it may create a database)');
  const database = `feedback_bench_endpoints_${process.pid}`;
  const admin = createSql(serverUrl, { max: 1 });
  await admin`create database ${admin(database)}`;
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-bench-endpoints-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: url.toString(),
    LOG_LEVEL: 'silent',
    RATE_LIMIT_API: '1000000/s',
    // 0: the endpoint's lookup (and the API keys') asked of PostgreSQL on every call, for an A/B.
    ...(process.env.BENCH_LOOKUP_CACHE === '0' ? { API_KEY_CACHE_SECONDS: '0' } : {}),
  });
  const services = await createServices(config, pino({ level: 'silent' }));
  let server: Server | undefined;
  try {
    await migrateAll(services);
    const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
    const account = await createAccount(services.sql, {
      email: 'bench-endpoints@example.com',
      plan: 'team',
      adminTokenHash: hashSecret(adminToken),
    });
    const made = await createProject(services.sql, {
      accountId: account?.id ?? '',
      name: 'bench',
      apiKeyHash: hashSecret(newSecret(API_KEY_PREFIX)),
      maxProjects: null,
    });
    if (made.kind !== 'created') throw new Error('no project');
    const projectId = made.project.id;
    const now = Date.now();
    await services.clickhouse.command({
      query: `INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
              SELECT {p:UUID}, toDateTime64(({t:Int64} - number * {step:Float64}) / 1000, 3, 'UTC'), generateUUIDv4(number),
                     ['feedback_list', 'feedback_detail', 'submit_feedback', 'purchase', 'share'][number % 5 + 1],
                     concat('user-', toString(cityHash64(number) % 10000)), '{}', '{}', now64(3)
              FROM numbers({n:UInt64})`,
      query_params: { p: projectId, t: now, step: (300 * DAY) / TOTAL, n: TOTAL },
    });
    const saved = await createSavedQuery(services.sql, { projectId, name: 'bench', sql: QUERY, createdBy: 'bench@example.com' });

    const app = buildApp({ ...services, operatorToken: newSecret('fbo_'), lifecycle: { stopping: false } });
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server?.once('listening', resolve));
    // The server's own time of each call, from the request's arrival to its answer written to the
    // socket: what a client elsewhere waits, less the network. The bench's client shares this
    // process's event loop, so the time it sees also holds work the engine's previous query left
    // on that loop (the direct query's, in the interleaved loop below).
    let lastServerMs = 0;
    server.prependListener('request', (_req, res) => {
      const arrived = performance.now();
      res.once('finish', () => {
        lastServerMs = performance.now() - arrived;
      });
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
    const publish = async (cacheSeconds: number) => {
      const r = await fetch(`${base}/projects/${projectId}/saved-queries/${saved.id}/endpoint`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cacheSeconds }),
      });
      if (r.status !== 200) throw new Error(`publish: ${r.status} ${await r.text()}`);
      return (await r.json()) as { id: string; token: string };
    };
    const get = async (endpoint: { id: string; token: string }, skip: string) => {
      const started = performance.now();
      const r = await fetch(`${base}/q/${endpoint.id}?skip=${skip}`, { headers: { authorization: `Bearer ${endpoint.token}` } });
      const body = (await r.json()) as { rows: number; statistics: { cached: boolean } };
      if (r.status !== 200) throw new Error(`call: ${r.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - started, serverMs: lastServerMs, cached: body.statistics.cached };
    };

    log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}; Node ${process.version}; embedded chDB; ${TOTAL.toLocaleString('en')} events; ${CALLS} calls each; endpoint lookup ${process.env.BENCH_LOOKUP_CACHE === '0' ? 'asked every call' : 'remembered'}; load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );

    // The query's own time, through the same lane without HTTP or the endpoint, and the uncached
    // endpoint (a new value per call), call by call in turn: a change of the machine's load (shared,
    // 2 cores) then weighs on both alike, and the difference is the endpoint's own cost.
    const project = await findProject(services.sql, projectId);
    if (!project) throw new Error('no project');
    const lane = projectQueries({ ...services, operatorToken: newSecret('fbo_'), lifecycle: { stopping: false } });
    let endpoint = await publish(0);
    const direct: number[] = [];
    const uncached: number[] = [];
    const uncachedServer: number[] = [];
    for (let i = 0; i < CALLS + 5; i++) {
      const { scope } = projectSqlScope(project, {});
      const started = performance.now();
      await lane.run(project.account_id, scope, QUERY, { skip: `direct-${i}` });
      if (i >= 5) direct.push(performance.now() - started);
      const call = await get(endpoint, `u-${i}`);
      if (call.cached) throw new Error('an uncached endpoint answered from its cache');
      if (i >= 5) uncached.push(call.ms);
      if (i >= 5) uncachedServer.push(call.serverMs);
    }

    // Cached: republished with a cache time (the same id, a new token), one value; in turn with the
    // floor of any request to this app, GET /healthz (no database).
    endpoint = await publish(3600);
    await get(endpoint, 'cached');
    const cached: number[] = [];
    const cachedServer: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const call = await get(endpoint, 'cached');
      if (!call.cached) throw new Error('a cached endpoint ran the query again');
      cached.push(call.ms);
      cachedServer.push(call.serverMs);
      const started = performance.now();
      await (await fetch(`${base.replace(/\/api\/v1$/, '')}/healthz`)).text();
      floor.push(performance.now() - started);
    }

    const q = figures(direct);
    const u = figures(uncached);
    const us = figures(uncachedServer);
    log(`query alone (lane, no HTTP): ${JSON.stringify(q)}`);
    log(
      `endpoint uncached:           ${JSON.stringify(u)}  overhead p50 ${(u.p50 - q.p50).toFixed(2)} ms, mean ${(u.mean - q.mean).toFixed(2)} ms`,
    );
    log(
      `  server side (in → written): ${JSON.stringify(us)}  overhead p50 ${(us.p50 - q.p50).toFixed(2)} ms, mean ${(us.mean - q.mean).toFixed(2)} ms`,
    );
    log(`endpoint cached:             ${JSON.stringify(figures(cached))}`);
    log(`  server side (in → written): ${JSON.stringify(figures(cachedServer))}`);
    log(`GET /healthz (HTTP floor):   ${JSON.stringify(figures(floor))}`);
    log(
      `load at the end: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await services.close();
    await rm(dataDir, { recursive: true, force: true });
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end();
  }
}

await main();
