/**
 * `node --import tsx bench/request-cost-ab.ts --old DIR` — the request path's own CPU cost, this
 * tree against another checkout (DIR, with its node_modules), interleaved (issue 31, "The request's
 * own cost"; BENCHMARKS.md).
 *
 * On a shared machine a whole `bench:ingest` run of one version, then of the other, sees different
 * loads: CPU per request moved 2-3x between runs of the same code. Here both services run at once,
 * each with its event sink switched to the no-op one (bench/server.ts, op `sink`: nothing is
 * stored, so only the request path is measured), and the load alternates between them in short
 * slices (A B, B A, ...), so a change of the machine's load falls on both. Per slice the service
 * process's CPU (utime + stime of every thread, /proc), less its idle rate measured just before
 * (timers, background workers), is divided by the requests it answered.
 *
 * Workloads: POST /events/track with a small JSON body (no eventId: the server makes one), and POST
 * /events/batch with 20 SDK-shaped events gzipped. Bare Koa (bench/bare-server.ts) answers the track
 * workload too, for the ratio the target names. The services log at BENCH_LOG_LEVEL (default
 * info, as in production) into /dev/null.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { createSql } from '../src/oltp/db.js';
import type { ControlReply, ReadyMessage } from './protocol.js';

const { values: args } = parseArgs({
  options: {
    old: { type: 'string' },
    slices: { type: 'string', default: '10' },
    'slice-seconds': { type: 'string', default: '2' },
    connections: { type: 'string', default: '20' },
  },
});
if (!args.old) throw new Error('--old DIR: a checkout of the version to compare with (with node_modules)');
const slices = Number(args.slices);
const sliceSeconds = Number(args['slice-seconds']);
const connections = Number(args.connections);
const here = path.dirname(fileURLToPath(import.meta.url));
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TICKS_PER_SECOND = 100;
const log = (line: string) => process.stderr.write(`[ab] ${line}\n`);

type Server = { name: string; child: ChildProcess; port: number; ask: (op: Record<string, unknown>) => Promise<unknown> };
const cleanups: (() => Promise<unknown>)[] = [];

async function start(name: string, script: string, env: NodeJS.ProcessEnv): Promise<Server> {
  const logs = env.LOG_LEVEL !== undefined && env.LOG_LEVEL !== 'silent';
  const child = fork(script, [], {
    execArgv: ['--import', 'tsx'],
    env,
    cwd: path.dirname(path.dirname(script)),
    stdio: ['ignore', logs ? 'ignore' : 'inherit', 'inherit', 'ipc'],
  });
  cleanups.push(async () => {
    child.kill('SIGKILL');
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (message: ReadyMessage) => resolve(message.port));
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
  });
  let next = 0;
  const waiting = new Map<number, (reply: ControlReply) => void>();
  child.on('message', (reply: ControlReply) => waiting.get(reply.id)?.(reply));
  const ask = (op: Record<string, unknown>) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (reply) => (reply.ok ? resolve(reply.result) : reject(new Error(reply.error))));
      child.send({ ...op, id });
    });
  return { name, child, port, ask };
}

async function service(name: string, root: string): Promise<Server & { apiKey: string }> {
  const database = `bench_ab_${name}_${process.pid}`;
  const admin = createSql(POSTGRES_URL, { max: 1 });
  await admin`create database ${admin(database)}`;
  cleanups.push(async () => {
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end({ timeout: 5 });
  });
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-ab-'));
  await chmod(dataDir, 0o755);
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const operatorToken = `fbo_ab_${randomBytes(16).toString('hex')}`;
  const server = await start(name, path.join(root, 'bench/server.ts'), {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: url.toString(),
    CLICKHOUSE_URL: '',
    REDIS_URL: '',
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    RATE_LIMIT_INGEST: '100000000/s',
    RATE_LIMIT_API: '100000000/s',
  });
  const base = `http://127.0.0.1:${server.port}`;
  const call = async <T>(urlPath: string, body: unknown, bearer: string) => {
    const response = await fetch(base + urlPath, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
      body: JSON.stringify(body),
    });
    if (response.status !== 200) throw new Error(`${name} ${urlPath}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const account = await call<{ admin_token: string }>(
    '/api/v1/admin/accounts',
    { email: `ab-${randomUUID()}@example.com`, plan: 'team' },
    operatorToken,
  );
  const project = await call<{ api_key: string }>('/api/v1/projects', { name: 'ab' }, account.admin_token);
  await server.ask({ op: 'sink', noop: true });
  return { ...server, apiKey: project.api_key };
}

function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

type Workload = { name: string; path: string; headers: Record<string, string>; body: string | Buffer };
const track: Workload = {
  name: 'POST /events/track, JSON',
  path: '/api/v1/events/track',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ eventName: 'screen_view', userId: 'user-1', properties: { screen: 'home', plan: 'pro', n: 1 } }),
};
const sdkEvents = Array.from({ length: 20 }, (_, i) => ({
  eventId: randomUUID(),
  eventName: 'screen_view',
  userId: `user-${i}`,
  timestamp: new Date().toISOString(),
  properties: { screen: 'home', plan: 'pro', n: i, locale: 'en-US', app_version: '1.2.3', os: 'iOS 17.1' },
}));
const batch: Workload = {
  name: 'POST /events/batch, 20 SDK events, gzip',
  path: '/api/v1/events/batch',
  headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  body: gzipSync(JSON.stringify({ sentAt: new Date().toISOString(), events: sdkEvents })),
};

/**
 * The server's CPU while it answers nothing (timers, background workers, GC), per ms, over one
 * second: subtracted from the loaded slice, so that what is divided by the requests is what they cost.
 */
async function idleCpuPerMs(server: { child: ChildProcess }): Promise<number> {
  const before = cpuTicks(server.child.pid as number);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  return (((cpuTicks(server.child.pid as number) - before) / TICKS_PER_SECOND) * 1000) / (performance.now() - started);
}
const IDLE_MS = 1000;

async function slice(server: { port: number; child: ChildProcess; apiKey?: string }, workload: Workload) {
  const idle = await idleCpuPerMs(server);
  const started = performance.now();
  const before = cpuTicks(server.child.pid as number);
  const result = await new Promise<autocannon.Result>((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${server.port}${workload.path}`,
        method: 'POST',
        headers: { ...workload.headers, ...(server.apiKey ? { 'x-api-key': server.apiKey } : {}) },
        body: workload.body,
        connections,
        duration: sliceSeconds,
      },
      (error, done) => (error ? reject(error) : resolve(done)),
    ),
  );
  const ticks = cpuTicks(server.child.pid as number) - before;
  const elapsedMs = performance.now() - started;
  if (result.non2xx > 0) throw new Error(`${workload.path}: ${result.non2xx} non-2xx answers`);
  return { requests: result['2xx'], cpuMs: Math.max(0, (ticks / TICKS_PER_SECOND) * 1000 - idle * elapsedMs) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

try {
  const old = await service('old', path.resolve(args.old));
  const now = await service('new', path.resolve(here, '..'));
  const bare = await start('bare', path.join(here, 'bare-server.ts'), { ...process.env });
  log(`old :${old.port}, new :${now.port}, bare :${bare.port}; ${slices} slices of ${sliceSeconds} s, ${connections} connections`);
  const lines: string[] = [];
  for (const workload of [track, batch]) {
    const versions = workload === track ? [old, now, bare] : [old, now];
    // Warm-up: every server answers the workload for one slice.
    for (const server of versions) await slice(server, workload);
    const per = new Map<string, { requests: number; cpuMs: number; perSlice: number[] }>(
      versions.map((s) => [s.name, { requests: 0, cpuMs: 0, perSlice: [] }]),
    );
    for (let i = 0; i < slices; i++) {
      const order = i % 2 === 0 ? versions : [...versions].reverse();
      for (const server of order) {
        const { requests, cpuMs } = await slice(server, workload);
        const total = per.get(server.name)!;
        total.requests += requests;
        total.cpuMs += cpuMs;
        total.perSlice.push((cpuMs * 1000) / requests);
      }
      log(`${workload.name}: slice ${i + 1}/${slices}`);
    }
    lines.push(
      `### ${workload.name}`,
      '',
      '| server | requests | CPU µs/request (all slices) | median of slices | min–max |',
      '|---|---|---|---|---|',
    );
    for (const [name, total] of per) {
      lines.push(
        `| ${name} | ${total.requests} | ${((total.cpuMs * 1000) / total.requests).toFixed(1)} | ${median(total.perSlice).toFixed(1)} | ${Math.min(...total.perSlice).toFixed(1)}–${Math.max(...total.perSlice).toFixed(1)} |`,
      );
    }
    const oldSlices = per.get('old')!.perSlice;
    const newSlices = per.get('new')!.perSlice;
    lines.push('', `new / old per slice pair: median ${median(newSlices.map((n, i) => n / (oldSlices[i] as number))).toFixed(3)}`, '');
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error: Error) => log(`cleanup: ${error.message}`));
}
process.exit(0);
