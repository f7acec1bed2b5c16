/**
 * `npm run bench:fairness`: does one account's BI load make another account wait (issue 37)?
 *
 * `npm start` (embedded chDB, PostgreSQL on DATABASE_URL's server, a fresh database) as a child
 * process, two accounts with a project and a ClickHouse credential each. The other account ("B")
 * sends small queries one after the other on each of the three read paths: the interface's own
 * port, `/clickhouse` of the API port, and the JSON route `POST /projects/:id/sql`. In one run:
 *
 * 1. without load: B's queries alone, FAIRNESS_SECONDS (default 20) per path;
 * 2. with load: the same, while the heavy account ("A") runs FAIRNESS_CLIENTS (default 8) BI-style
 *    clients on the interface: each sends a heavy aggregation (seconds of one thread) again and
 *    again, and gives up on every third after a random 0.3–3 s (the tool's cancel: the connection
 *    is closed).
 *
 * Prints, per path and phase, B's p50, p99 and max in ms and its answers that were not 200, and A's
 * answers by status. Issue 37's bound: B's p99 at most 2 s on every path under the load.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findFreePort } from '../src/core/net.js';
import { createSql } from '../src/oltp/db.js';
import { runTsx } from './child.js';

const SECONDS = Number(process.env.FAIRNESS_SECONDS ?? 20);
const CLIENTS = Number(process.env.FAIRNESS_CLIENTS ?? 8);
const log = (line: string) => process.stdout.write(`${line}\n`);

/** A's query: a BI tool's heavy aggregation, seconds of one thread (the lane gives each query one). */
const HEAVY =
  'SELECT intDiv(number, 1000000) AS bucket, count() AS n, uniq(cityHash64(number) % 9999) AS u FROM numbers(60000000) GROUP BY bucket ORDER BY bucket';
/** B's query: a small one over its own events. */
const SMALL = 'SELECT count() AS n, uniq(user_id) AS users FROM events';

type Account = { adminToken: string; projectId: string; auth: string };

async function json(url: string, init: RequestInit): Promise<any> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text}`);
  return JSON.parse(text);
}

async function account(api: string, operatorToken: string, name: string): Promise<Account> {
  const headers = { 'content-type': 'application/json' };
  const created = await json(`${api}/admin/accounts`, {
    method: 'POST',
    headers: { ...headers, authorization: `Bearer ${operatorToken}` },
    body: JSON.stringify({ email: `fairness-${name}-${randomUUID()}@example.com`, plan: 'team' }),
  });
  const admin = { ...headers, authorization: `Bearer ${created.admin_token}` };
  const project = await json(`${api}/projects`, { method: 'POST', headers: admin, body: JSON.stringify({ name }) });
  const credential = await json(`${api}/projects/${project.id}/clickhouse-credentials`, { method: 'POST', headers: admin });
  // A few events of its own, so B's query reads something.
  await json(`${api}/events/batch`, {
    method: 'POST',
    headers: { ...headers, 'x-api-key': project.api_key },
    body: JSON.stringify({ events: Array.from({ length: 200 }, (_, i) => ({ eventName: 'page_view', userId: `u${i % 17}` })) }),
  });
  return {
    adminToken: created.admin_token,
    projectId: project.id,
    auth: `Basic ${Buffer.from(`${credential.username}:${credential.password}`).toString('base64')}`,
  };
}

type Path = { name: string; ask: (query: string, signal: AbortSignal) => Promise<number | string> };

function paths(apiBase: string, chBase: string, who: Account): Path[] {
  const interfaceAt = (base: string) => async (query: string, signal: AbortSignal) => {
    const response = await fetch(`${base}/?${new URLSearchParams({ query })}`, { headers: { authorization: who.auth }, signal });
    await response.arrayBuffer();
    const code = response.headers.get('x-clickhouse-exception-code');
    return code ? `${response.status} (code ${code})` : response.status;
  };
  return [
    { name: 'interface port', ask: interfaceAt(chBase) },
    { name: '/clickhouse', ask: interfaceAt(`${apiBase}/clickhouse`) },
    {
      name: 'JSON route',
      ask: async (query, signal) => {
        const response = await fetch(`${apiBase}/api/v1/projects/${who.projectId}/sql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${who.adminToken}` },
          body: JSON.stringify({ query }),
          signal,
        });
        await response.arrayBuffer();
        return response.status;
      },
    },
  ];
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** B's small queries on one path for `seconds`, one after the other: latencies and the statuses other than 200. */
async function measure(path_: Path, seconds: number) {
  const latencies: number[] = [];
  const other: Record<string, number> = {};
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    const status = await path_.ask(SMALL, AbortSignal.timeout(30_000)).catch(() => 0);
    latencies.push(performance.now() - started);
    if (status !== 200) other[status] = (other[status] ?? 0) + 1;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  latencies.sort((a, b) => a - b);
  return {
    n: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? Number.NaN,
    other,
  };
}

/** A's clients: heavy queries again and again, every third given up after 0.3–3 s. Resolves with A's answers by status once `stop` is set. */
function heavyLoad(ask: Path['ask'], clients: number, stop: { done: boolean }) {
  const statuses: Record<string, number> = {};
  const client = async () => {
    let round = 0;
    while (!stop.done) {
      round += 1;
      const controller = new AbortController();
      const cancel = round % 3 === 0 ? setTimeout(() => controller.abort(), 300 + Math.random() * 2_700) : undefined;
      const status = await ask(HEAVY, controller.signal).catch(() => (controller.signal.aborted ? 'cancelled' : 'error'));
      clearTimeout(cancel);
      statuses[status] = (statuses[status] ?? 0) + 1;
      // A refused query (202: the account's limit) is retried soon, as tools do.
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return Promise.all(Array.from({ length: clients }, client)).then(() => statuses);
}

async function main() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('bench:fairness needs DATABASE_URL (a PostgreSQL server; a fresh database is made on it)');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-fairness-'));
  const dbName = `bench_fairness_${randomBytes(4).toString('hex')}`;
  const admin = createSql(databaseUrl, { max: 1 });
  await admin`create database ${admin(dbName)}`;
  const url = new URL(databaseUrl);
  url.pathname = `/${dbName}`;
  const [port, chPort] = [await findFreePort(), await findFreePort()];
  const operatorToken = `fbo_bench_${randomBytes(16).toString('hex')}`;
  const service = runTsx(['src/main.ts'], {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    CLICKHOUSE_INTERFACE_PORT: String(chPort),
    METRICS_PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: url.toString(),
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_API: 'off',
    RATE_LIMIT_INGEST: 'off',
    REDIS_URL: '',
    CLICKHOUSE_URL: '',
  });
  service.stdout?.resume(); // its warnings are not read
  const apiBase = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${apiBase}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  try {
    const heavy = await account(`${apiBase}/api/v1`, operatorToken, 'heavy');
    const other = await account(`${apiBase}/api/v1`, operatorToken, 'other');
    const chBase = `http://127.0.0.1:${chPort}`;
    const otherPaths = paths(apiBase, chBase, other);
    const [heavyInterface] = paths(apiBase, chBase, heavy);
    log(
      `bench:fairness: ${cpus().length} cores, load ${loadavg()
        .map((n) => n.toFixed(1))
        .join(' ')}; ${SECONDS} s per path and phase; ${CLIENTS} heavy clients`,
    );
    for (const p of otherPaths) await measure(p, 2); // warm-up: first queries read the catalog

    const rows: string[] = [];
    for (const p of otherPaths) {
      const alone = await measure(p, SECONDS);
      rows.push(row(p.name, 'without load', alone));
    }
    const stop = { done: false };
    const load = heavyLoad((heavyInterface as Path).ask, CLIENTS, stop);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // the load has filled A's share
    for (const p of otherPaths) {
      const loaded = await measure(p, SECONDS);
      rows.push(row(p.name, `with A's ${CLIENTS} clients`, loaded));
    }
    stop.done = true;
    const heavyStatuses = await load;
    log('| path | phase | B queries | p50 ms | p99 ms | max ms | B not 200 |');
    log('|---|---|---|---|---|---|---|');
    for (const line of rows) log(line);
    log(`A's answers during the load: ${JSON.stringify(heavyStatuses)}`);
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
    await admin`drop database if exists ${admin(dbName)} with (force)`.catch(() => undefined);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function row(name: string, phase: string, m: Awaited<ReturnType<typeof measure>>): string {
  return `| ${name} | ${phase} | ${m.n} | ${m.p50.toFixed(0)} | ${m.p99.toFixed(0)} | ${m.max.toFixed(0)} | ${JSON.stringify(m.other)} |`;
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:fairness failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
