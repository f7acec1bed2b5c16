/**
 * `npm run bench:export`: exports 10 million events of one project from a running service (`npm
 * start`, embedded chDB, as a child process) in CSV, JSON Lines and Parquet over HTTP, and prints
 * for each format the time, the size, the service's resident memory before and at its peak
 * (VmRSS sampled from /proc every 50 ms), and the latency of metrics requests sent meanwhile.
 *
 * The events are loaded first by a loader process (this file with `load`), straight into
 * ClickHouse with INSERT … SELECT (the rollups fill as in production); the service then opens the
 * same data directory. PostgreSQL: a fresh database on DATABASE_URL's server (required).
 * Knobs: BENCH_EVENTS (default 10,000,000), BENCH_FORMATS (default csv,jsonl,parquet).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { loadConfig } from '../src/core/config.js';
import { findFreePort } from '../src/core/net.js';
import { ADMIN_TOKEN_PREFIX, API_KEY_PREFIX, hashSecret, newSecret } from '../src/core/secrets.js';
import { createAccount } from '../src/oltp/accounts.repo.js';
import { createSql } from '../src/oltp/db.js';
import { createProject } from '../src/oltp/projects.repo.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';
import { output, rssMb, runTsx } from './child.js';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const FORMATS = (process.env.BENCH_FORMATS ?? 'csv,jsonl,parquet').split(',');
const DAY = 24 * 3600 * 1000;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Loader: account, project and TOTAL events over the last 300 days; prints the ids as JSON. */
async function load(dataDir: string, databaseUrl: string) {
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const services = await createServices(config, pino({ level: 'silent' }));
  try {
    await migrateAll(services);
    const adminToken = newSecret(ADMIN_TOKEN_PREFIX);
    const account = await createAccount(services.sql, { email: 'bench@example.com', plan: 'team', adminTokenHash: hashSecret(adminToken) });
    const project = await createProject(services.sql, {
      accountId: account?.id ?? '',
      name: 'bench',
      apiKeyHash: hashSecret(newSecret(API_KEY_PREFIX)),
      maxProjects: null,
    });
    if (project.kind !== 'created') throw new Error('no project');
    const now = Date.now();
    const step = (300 * DAY) / TOTAL;
    const started = performance.now();
    for (let offset = 0; offset < TOTAL; offset += 1_000_000) {
      const count = Math.min(1_000_000, TOTAL - offset);
      await services.clickhouse.command({
        query: `INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
                SELECT {p:UUID}, toDateTime64(({t:Int64} - (number + {o:UInt64}) * {step:Float64}) / 1000, 3, 'UTC'), generateUUIDv4(number),
                       ['feedback_list', 'feedback_detail', 'submit_feedback', 'purchase', 'share'][number % 5 + 1],
                       concat('user-', toString(cityHash64(number) % 100000)),
                       '{"plan":"pro","screen":"home"}', '{"plan":"pro","screen":"home"}', now64(3)
                FROM numbers({n:UInt64})`,
        query_params: { p: project.project.id, t: now, o: offset, step, n: count },
        clickhouse_settings: { insert_deduplication_token: `bench-export-${offset}-${randomBytes(4).toString('hex')}` },
      });
      process.stderr.write(
        `loaded ${(offset + count).toLocaleString('en')} events (${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    }
    log(`LOADED ${JSON.stringify({ projectId: project.project.id, adminToken, seconds: (performance.now() - started) / 1000 })}`);
  } finally {
    await services.close();
  }
}

async function orchestrate() {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('bench:export needs DATABASE_URL (a PostgreSQL server where it may create a database)');
  const database = `feedback_bench_export_${process.pid}`;
  const admin = createSql(serverUrl, { max: 1 });
  await admin`create database ${admin(database)}`;
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-bench-export-'));
  let service: ChildProcess | undefined;
  try {
    const loader = runTsx(['bench/export.ts', 'load', dataDir, databaseUrl], process.env);
    const loaded = JSON.parse((await output(loader, /^LOADED (.*)$/m))[1] ?? '{}') as {
      projectId: string;
      adminToken: string;
      seconds: number;
    };
    await new Promise((resolve) => loader.once('exit', resolve));
    log(`loaded ${TOTAL.toLocaleString('en')} events in ${loaded.seconds.toFixed(0)} s`);

    const port = await findFreePort();
    service = runTsx(['src/main.ts'], {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN: `fbo_bench_${randomBytes(16).toString('hex')}`,
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      REDIS_URL: '',
      CLICKHOUSE_URL: '',
    });
    const pid = service.pid as number;
    // LOG_LEVEL=warn hides the "listening" line: wait until the port answers.
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        if (i > 600) throw new Error('the service did not start');
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const auth = { authorization: `Bearer ${loaded.adminToken}` };
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 364 * DAY).toISOString().slice(0, 10);
    log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; embedded chDB, PostgreSQL on DATABASE_URL`,
    );
    log('| format | events | MB | seconds | MB/s | service RSS before → peak (MB) | metrics requests meanwhile: n, p50 / max ms |');
    log('|---|---|---|---|---|---|---|');
    for (const format of FORMATS) {
      const before = rssMb(pid);
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMb(pid));
      }, 50);
      const latencies: number[] = [];
      let exporting = true;
      const prober = (async () => {
        while (exporting) {
          const t = performance.now();
          const response = await fetch(`${base}/api/v1/projects/${loaded.projectId}/metrics/summary?measures=event_count`, {
            headers: auth,
          });
          await response.text();
          latencies.push(performance.now() - t);
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      const started = performance.now();
      const response = await fetch(
        `${base}/api/v1/projects/${loaded.projectId}/exports/events?format=${format}&date_from=${from}&date_to=${today}`,
        { headers: auth },
      );
      if (response.status !== 200) throw new Error(`export ${format}: ${response.status} ${await response.text()}`);
      let bytes = 0;
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
      const seconds = (performance.now() - started) / 1000;
      exporting = false;
      clearInterval(sampler);
      await prober;
      latencies.sort((a, b) => a - b);
      const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;
      const max = latencies.at(-1) ?? 0;
      log(
        `| ${format} | ${TOTAL.toLocaleString('en')} | ${(bytes / 1e6).toFixed(0)} | ${seconds.toFixed(1)} | ${(bytes / 1e6 / seconds).toFixed(0)} | ` +
          `${before.toFixed(0)} → ${peak.toFixed(0)} | ${latencies.length}, ${p50.toFixed(0)} / ${max.toFixed(0)} |`,
      );
    }
  } finally {
    if (service && service.exitCode === null) {
      service.kill('SIGTERM');
      await new Promise((resolve) => service?.once('exit', resolve));
    }
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const [role, dataDir, databaseUrl] = process.argv.slice(2);
(role === 'load' ? load(dataDir as string, databaseUrl as string) : orchestrate()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
