/**
 * `npm run bench:similar`: GET /feedbacks/similar (issue 40) on one project holding BENCH_ITEMS
 * feature requests (default 50,000), timed over HTTP against the service built as `npm start`
 * builds it (createServices, migrations, buildApp), and the query alone (findSimilarFeedback), with
 * p50/p95/p99 of each.
 *
 * The items are generated from the words of test/fixtures/similar-requests.json: titles of 3 to 8
 * words and descriptions of 8 to 25, drawn with a Zipf-like skew so that some words ("task",
 * "list") are in thousands of items, as in a real project, and every query's candidate set is
 * realistic. The queries are the fixture's titles and their prefixes (a user typing), BENCH_RUNS in
 * all (default 1,000) after 100 of warm-up, one at a time.
 *
 * PostgreSQL: a fresh database on DATABASE_URL's server (required), dropped at the end (BENCH_KEEP=1
 * keeps it, for EXPLAIN).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/core/config.js';
import { ADMIN_TOKEN_PREFIX, API_KEY_PREFIX, hashSecret, newSecret } from '../src/core/secrets.js';
import { createAccount } from '../src/oltp/accounts.repo.js';
import { createSql } from '../src/oltp/db.js';
import { createProject } from '../src/oltp/projects.repo.js';
import { findSimilarFeedback } from '../src/oltp/similar-feedback.repo.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';

const ITEMS = Number(process.env.BENCH_ITEMS ?? 50_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 1_000);
const WARMUP = 100;
const BATCH = 5_000;
const log = (line: string) => process.stdout.write(`${line}\n`);

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('bench:similar needs DATABASE_URL (a PostgreSQL server; a fresh database is created on it)');

type Request = { title: string; description: string };
const fixture: { groups: Request[][]; singles: Request[] } = JSON.parse(
  readFileSync(new URL('../test/fixtures/similar-requests.json', import.meta.url), 'utf8'),
);
const requests = [...fixture.groups.flat(), ...fixture.singles];
const vocabulary = [
  ...new Set(requests.flatMap((request) => `${request.title} ${request.description}`.toLowerCase().match(/[a-z0-9']+/g) ?? [])),
];

/** A seeded generator (mulberry32): every run loads the same items. */
let state = 40;
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
/** Zipf-like: the first words of the vocabulary are drawn far more often than the last. */
const word = () => vocabulary[Math.floor(vocabulary.length * random() ** 2.5)] as string;
const words = (min: number, max: number) => Array.from({ length: min + Math.floor(random() * (max - min + 1)) }, word).join(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}
const summary = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(2)} ms, p95 ${percentile(sorted, 95).toFixed(2)} ms, p99 ${percentile(sorted, 99).toFixed(2)} ms`;
};

/** The texts a user sends while typing: whole titles and their prefixes of at least 3 characters. */
function queries(): string[] {
  const all: string[] = [];
  for (const request of requests) {
    all.push(request.title);
    const cut = Math.max(3, Math.floor(request.title.length * (0.4 + random() * 0.4)));
    all.push(request.title.slice(0, cut));
  }
  return all;
}

const admin = createSql(databaseUrl, { max: 1 });
const database = `bench_similar_${randomBytes(4).toString('hex')}`;
await admin.unsafe(`create database ${database}`); // a name of our own making, [a-z0-9_] only
const url = new URL(databaseUrl);
url.pathname = `/${database}`;
const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-similar-'));
const config = loadConfig({
  ...process.env,
  DATABASE_URL: url.toString(),
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  RATE_LIMIT_API: '1000000/s',
});
const services = await createServices(config, pino({ level: 'silent' }));
let server: Server | undefined;
try {
  await migrateAll(services);
  const { sql } = services;
  const account = await createAccount(sql, {
    email: 'bench-similar@example.com',
    plan: 'team',
    adminTokenHash: hashSecret(newSecret(ADMIN_TOKEN_PREFIX)),
  });
  const apiKey = newSecret(API_KEY_PREFIX);
  const created = await createProject(sql, {
    accountId: account?.id ?? '',
    name: 'bench',
    apiKeyHash: hashSecret(apiKey),
    maxProjects: null,
  });
  if (created.kind !== 'created') throw new Error('no project');
  const projectId = created.project.id;

  const loadStart = performance.now();
  // Loaded in bulk: the vocabulary's per-row triggers are off during the load and the counts are
  // then computed once, as migration 019 computes them for the items already stored.
  await sql`alter table feedbacks disable trigger feedbacks_search_count`;
  for (let offset = 0; offset < ITEMS; offset += BATCH) {
    const count = Math.min(BATCH, ITEMS - offset);
    const titles = Array.from({ length: count }, () => words(3, 8).slice(0, 200));
    const descriptions = Array.from({ length: count }, () => words(8, 25));
    await sql`
      insert into feedbacks (project_id, title, description, category, user_id, vote_count)
      select ${projectId}, t, d, 'feature_request', 'bench-user', 1
      from unnest(${titles}::text[], ${descriptions}::text[]) as x(t, d)`;
  }
  await sql`alter table feedbacks enable trigger feedbacks_search_count`;
  await sql`
    insert into feedback_lexemes (project_id, lexeme, items)
    select f.project_id, lexeme, count(*)::int
    from feedbacks f, unnest(tsvector_to_array(f.search_vector)) as lexeme
    where f.project_id = ${projectId}
    group by f.project_id, lexeme`;
  await sql`insert into feedback_search_totals (project_id, items) values (${projectId}, ${ITEMS})`;
  await sql`analyze feedbacks`;
  await sql`analyze feedback_lexemes`;
  log(`loaded ${ITEMS} items in ${((performance.now() - loadStart) / 1000).toFixed(1)} s; ${vocabulary.length} distinct words`);

  const texts = queries();
  const pick = (i: number) => texts[i % texts.length] as string;
  let matched = 0;
  const queryTimes: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i += 1) {
    const start = performance.now();
    const rows = await findSimilarFeedback(sql, projectId, pick(i), { limit: 5 });
    if (i >= WARMUP) {
      queryTimes.push(performance.now() - start);
      if (rows.length > 0) matched += 1;
    }
  }

  log(`the query alone (findSimilarFeedback), ${RUNS} texts: ${summary(queryTimes)}; ${matched} of them matched something`);
  server = buildApp({ ...services, operatorToken: newSecret('fbo_') }).listen(0, '127.0.0.1');
  await new Promise((resolve) => server?.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const httpTimes: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i += 1) {
    const start = performance.now();
    const response = await fetch(`${base}/api/v1/feedbacks/similar?q=${encodeURIComponent(pick(i + 7))}`, {
      headers: { 'X-API-Key': apiKey },
    });
    if (response.status !== 200) throw new Error(`GET /feedbacks/similar answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    if (i >= WARMUP) httpTimes.push(performance.now() - start);
  }
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  log(`GET /feedbacks/similar over HTTP, ${RUNS} texts: ${summary(httpTimes)}`);
} finally {
  server?.close();
  await services.close();
  // BENCH_KEEP=1 keeps the database for EXPLAIN (its name is printed).
  if (process.env.BENCH_KEEP === '1') log(`kept database ${database}`);
  else await admin.unsafe(`drop database if exists ${database} with (force)`);
  await admin.end();
  await rm(dataDir, { recursive: true, force: true });
}
