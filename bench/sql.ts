/**
 * `npm run bench:sql`: the ClickHouse interface (docs/clickhouse-interface.md) against the engine
 * alone, in one run, on one project's events (BENCH_EVENTS, default 1,000,000, over the last 300
 * days of a Team project, so the plan's window holds them all):
 *
 * - the engine alone: a process of its own opens the data directory with chDB and writes the same
 *   query's output to a file, as JSONEachRow and as Parquet (`INTO OUTFILE`, one thread as the
 *   interface's lane and the default threads), and times its first piece of output with chDB's
 *   streaming query;
 * - the interface: `npm start` (embedded chDB) as a child process, the export read over HTTP from
 *   its own port; time to first byte, rows/s, bytes, and the service's resident memory (VmRSS,
 *   sampled every 50 ms) before and at its peak.
 *
 * BENCH_ROUNDS (default 1) repeats the engine alone and the interface; BENCH_BASELINE, the
 * directory of a checkout of an earlier commit (its node_modules linked), measures that service
 * too, alternating with this one, so before and after are compared under the same load.
 *
 * PostgreSQL: a fresh database on DATABASE_URL's server (required).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { CLICKHOUSE_PASSWORD_PREFIX } from '../src/api/clickhouse/credentials.routes.js';
import { loadConfig } from '../src/core/config.js';
import { findFreePort } from '../src/core/net.js';
import { ADMIN_TOKEN_PREFIX, API_KEY_PREFIX, hashSecret, newSecret } from '../src/core/secrets.js';
import { createAccount } from '../src/oltp/accounts.repo.js';
import { createClickhouseCredential } from '../src/oltp/clickhouse-credentials.repo.js';
import { createSql } from '../src/oltp/db.js';
import { createProject } from '../src/oltp/projects.repo.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';
import { output, rssMb, runTsx } from './child.js';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const DAY = 24 * 3600 * 1000;
const FORMATS = ['JSONEachRow', 'Parquet'] as const;
/** Rounds of the interface's measurement (each variant once per round, alternating). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const log = (line: string) => process.stdout.write(`${line}\n`);

/** The export both sides run: every column of the project's events. */
const exportQuery = (projectId: string) => `SELECT * FROM events WHERE project_id = '${projectId}'`;

/** Loader: a Team account, a project, its events and a credential; prints the ids as JSON. */
async function load(dataDir: string, databaseUrl: string) {
  const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const services = await createServices(config, pino({ level: 'silent' }));
  try {
    await migrateAll(services);
    const account = await createAccount(services.sql, {
      email: 'bench-sql@example.com',
      plan: 'team',
      adminTokenHash: hashSecret(newSecret(ADMIN_TOKEN_PREFIX)),
    });
    const project = await createProject(services.sql, {
      accountId: account?.id ?? '',
      name: 'bench',
      apiKeyHash: hashSecret(newSecret(API_KEY_PREFIX)),
      maxProjects: null,
    });
    if (project.kind !== 'created') throw new Error('no project');
    const password = newSecret(CLICKHOUSE_PASSWORD_PREFIX);
    await createClickhouseCredential(services.sql, { projectId: project.project.id, passwordHash: hashSecret(password) });
    const now = Date.now();
    const step = (300 * DAY) / TOTAL;
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
        clickhouse_settings: { insert_deduplication_token: `bench-sql-${offset}-${randomBytes(4).toString('hex')}` },
      });
    }
    log(`LOADED ${JSON.stringify({ projectId: project.project.id, password })}`);
  } finally {
    await services.close();
  }
}

type ChdbSession = {
  queryAsync(q: string, o: { format: string }): Promise<unknown>;
  queryStream(q: string, o: { format: string }): AsyncIterable<{ raw(): Uint8Array }>;
  close(): void;
};

/** The engine alone, in a process of its own: INTO OUTFILE times and the first piece of a stream. */
async function engineAlone(dataDir: string, projectId: string, outDir: string) {
  const require = createRequire(import.meta.url);
  const { Session } = require('chdb') as { Session: new (p: string) => ChdbSession };
  const session = new Session(path.join(dataDir, 'clickhouse'));
  const results: Record<string, unknown>[] = [];
  try {
    // Warm: the first read of the parts after loading pays for the page cache; the interface,
    // measured after, would not.
    for await (const _ of session.queryStream(`${exportQuery(projectId)} SETTINGS max_threads = 1`, { format: 'Native' })) void _;
    for (const format of FORMATS) {
      for (const threads of [1, 0]) {
        const file = path.join(outDir, `engine-${format}-${threads}.out`);
        const started = performance.now();
        await session.queryAsync(
          `${exportQuery(projectId)} SETTINGS max_threads = ${threads} INTO OUTFILE '${file}' TRUNCATE FORMAT ${format}`,
          { format: 'TSV' },
        );
        const seconds = (performance.now() - started) / 1000;
        results.push({ format, threads, seconds, bytes: statSync(file).size });
        await rm(file, { force: true });
      }
      // chDB's streaming query (what the interface reads) written to a file: its first piece, and its whole time.
      const file = path.join(outDir, `engine-${format}-stream.out`);
      const out = createWriteStream(file);
      const started = performance.now();
      let ttfbMs = 0;
      for await (const chunk of session.queryStream(`${exportQuery(projectId)} SETTINGS max_threads = 1, max_block_size = 65409`, {
        format,
      })) {
        if (ttfbMs === 0) ttfbMs = performance.now() - started;
        if (!out.write(chunk.raw())) await once(out, 'drain');
      }
      await new Promise((resolve) => out.end(resolve));
      results.push({ format, ttfbMs, streamSeconds: (performance.now() - started) / 1000, bytes: statSync(file).size });
      await rm(file, { force: true });
    }
  } finally {
    session.close();
  }
  log(`ENGINE ${JSON.stringify(results)}`);
}

async function orchestrate() {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) throw new Error('bench:sql needs DATABASE_URL (a PostgreSQL server where it may create a database)');
  const database = `feedback_bench_sql_${process.pid}`;
  const admin = createSql(serverUrl, { max: 1 });
  await admin`create database ${admin(database)}`;
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const databaseUrl = url.toString();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-bench-sql-'));
  let service: ChildProcess | undefined;
  try {
    const loader = runTsx(['bench/sql.ts', 'load', dataDir, databaseUrl], process.env);
    const loaded = JSON.parse((await output(loader, /^LOADED (.*)$/m))[1] ?? '{}') as { projectId: string; password: string };
    await new Promise((resolve) => loader.once('exit', resolve));

    log(
      `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; embedded chDB; ${TOTAL.toLocaleString('en')} events; load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; shared and noisy (other engineers' work ran beside it)`,
    );
    const rate = (seconds = 1) => Math.round(TOTAL / seconds).toLocaleString('en');
    log('| round | format | path | first byte (ms) | seconds | rows/s | MB | RSS before → peak (MB) | interface ÷ engine (1 thread) |');
    log('|---|---|---|---|---|---|---|---|---|');

    // The service as built here; with BENCH_BASELINE (a checkout of an earlier commit, its
    // node_modules linked), that one too. Each round measures the engine alone, then each variant,
    // one after the other, so the ratios of a round are taken under the same load.
    const variants = [
      ...(process.env.BENCH_BASELINE ? [{ label: 'the interface, before (BENCH_BASELINE)', cwd: process.env.BENCH_BASELINE }] : []),
      { label: 'the interface (HTTP, own port)', cwd: process.cwd() },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      const engine = runTsx(['bench/sql.ts', 'engine', dataDir, loaded.projectId, dataDir], process.env);
      const alone = JSON.parse((await output(engine, /^ENGINE (.*)$/m))[1] ?? '[]') as {
        format: string;
        threads?: number;
        seconds?: number;
        bytes?: number;
        ttfbMs?: number;
        streamSeconds?: number;
      }[];
      await new Promise((resolve) => engine.once('exit', resolve));
      for (const format of FORMATS) {
        const one = alone.find((r) => r.format === format && r.threads === 1);
        const all = alone.find((r) => r.format === format && r.threads === 0);
        const streamed = alone.find((r) => r.format === format && r.ttfbMs !== undefined);
        log(
          `| ${round} | ${format} | chDB alone, its streaming query to a file, 1 thread | ${(streamed?.ttfbMs ?? 0).toFixed(0)} | ${streamed?.streamSeconds?.toFixed(2)} | ${rate(streamed?.streamSeconds)} | ${((streamed?.bytes ?? 0) / 1e6).toFixed(0)} | — | — |`,
        );
        log(
          `| ${round} | ${format} | chDB alone to a file (INTO OUTFILE), 1 thread | — | ${one?.seconds?.toFixed(2)} | ${rate(one?.seconds)} | ${((one?.bytes ?? 0) / 1e6).toFixed(0)} | — | — |`,
        );
        log(
          `| ${round} | ${format} | chDB alone to a file (INTO OUTFILE), default threads | — | ${all?.seconds?.toFixed(2)} | ${rate(all?.seconds)} | ${((all?.bytes ?? 0) / 1e6).toFixed(0)} | — | — |`,
        );
      }

      // Alternating: each round reverses the order of the variants.
      for (const variant of round % 2 === 1 ? variants : [...variants].reverse()) {
        const [port, chPort] = [await findFreePort(), await findFreePort()];
        service = runTsx(
          ['src/main.ts'],
          {
            ...process.env,
            PORT: String(port),
            HOST: '127.0.0.1',
            DATA_DIR: dataDir,
            DATABASE_URL: databaseUrl,
            OPERATOR_TOKEN: `fbo_bench_${randomBytes(16).toString('hex')}`,
            LOG_LEVEL: 'warn',
            METRICS_PORT: '0',
            CLICKHOUSE_INTERFACE_PORT: String(chPort),
            REDIS_URL: '',
            CLICKHOUSE_URL: '',
            // A loaded machine may take longer than the default minute; a cut export is no figure.
            CLICKHOUSE_INTERFACE_TIMEOUT_MS: '3600000',
          },
          variant.cwd,
        );
        const pid = service.pid as number;
        for (let i = 0; ; i++) {
          try {
            if ((await fetch(`http://127.0.0.1:${chPort}/ping`)).ok) break;
          } catch {
            if (i > 600) throw new Error('the service did not start');
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const auth = `Basic ${Buffer.from(`${loaded.projectId}:${loaded.password}`).toString('base64')}`;
        for (const format of FORMATS) {
          const one = alone.find((r) => r.format === format && r.threads === 1);
          const before = rssMb(pid);
          let peak = before;
          const sampler = setInterval(() => {
            peak = Math.max(peak, rssMb(pid));
          }, 50);
          const started = performance.now();
          const response = await fetch(
            `http://127.0.0.1:${chPort}/?${new URLSearchParams({ query: `SELECT * FROM events FORMAT ${format}` })}`,
            { headers: { authorization: auth } },
          );
          let first = 0;
          let bytes = 0;
          let tail = '';
          const reader = response.body?.getReader();
          for (;;) {
            const piece = await reader?.read();
            if (!piece || piece.done) break;
            if (first === 0) first = performance.now() - started;
            bytes += piece.value.byteLength;
            tail = (tail + Buffer.from(piece.value.subarray(-200)).toString('latin1')).slice(-200);
          }
          if (tail.includes('__exception__')) throw new Error(`the export was cut: ${tail}`);
          const seconds = (performance.now() - started) / 1000;
          clearInterval(sampler);
          const code = response.headers.get('x-clickhouse-exception-code');
          if (response.status !== 200 || code) throw new Error(`the interface answered ${response.status} ${code ?? ''}`);
          log(
            `| ${round} | ${format} | ${variant.label} | ${first.toFixed(0)} | ${seconds.toFixed(2)} | ${rate(seconds)} | ${(bytes / 1e6).toFixed(0)} | ${before.toFixed(0)} → ${peak.toFixed(0)} | ${((one?.seconds ?? 0) / seconds).toFixed(2)}× |`,
          );
        }
        const stopping = service;
        stopping.kill('SIGTERM');
        await new Promise((resolve) => stopping.once('exit', resolve));
        service = undefined;
      }
    }
  } finally {
    service?.kill('SIGTERM');
    if (service) await new Promise((resolve) => service?.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end();
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'load') await load(args[0] ?? '', args[1] ?? '');
else if (mode === 'engine') await engineAlone(args[0] ?? '', args[1] ?? '', args[2] ?? '');
else await orchestrate();
