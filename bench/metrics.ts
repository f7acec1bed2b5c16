/**
 * `npm run bench:metrics`: loads 10 million events for one Team project spread over 365 days
 * (plus 10 small projects), then times the metrics API over 365 days — summary, timeseries
 * (day), breakdown (event_name) and the events feed — over HTTP, next to the same aggregation
 * computed on the raw events table in the same run, and prints p50/p95 and the ratios.
 *
 * Embedded mode (chDB in this process), as `npm start` runs it. PostgreSQL: a fresh database on
 * DATABASE_URL's server when set, else the embedded one. Knobs: BENCH_EVENTS (default
 * 10,000,000), BENCH_USERS (default 100,000), BENCH_RUNS (default 30 per operation),
 * BENCH_ONLY=insights (skip the metrics table, time only the insights), BENCH_LOAD=sql (generate the
 * events inside the engine, `INSERT INTO events SELECT … FROM numbers()`, with the same
 * distributions: ten times faster than building them in JavaScript, for 100 M events),
 * BENCH_NAIVE=0 (time no naive query and skip their checks; the default above 20 M events, where
 * the 3-step self-join alone would pair billions of rows), BENCH_ONLY=sessions (time only the
 * session cases).
 *
 * Insights (issues 24 and 30, docs/insights.md): a 3-step funnel, 12-week retention and paths of
 * depth 4 over the 365 days, next to the same answers computed naively on `events` (self-joins,
 * window functions; checked equal first), with the peak memory of each query (the engine's own
 * `system.processes.peak_memory_usage`, sampled from a second chDB session while it runs: chDB
 * writes no query_log), the disk of `events` and of its user-ordered copy per million events, paths
 * again after adding BENCH_SHORT_USERS (default 10) users whose first 40 events are one name (the
 * short users the bounded paths query asks for again, issue 38), and the live view's latency
 * (request sent to event received on an SSE stream) under ingest load.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import { uuidv7 } from 'uuidv7';
import { buildApp } from '../src/api/app.js';
import { edgeOrder } from '../src/api/insights/insights.service.js';
import { loadConfig } from '../src/core/config.js';
import type { IngestEvent } from '../src/core/event.js';
import { type ClickHouseClient, createClickHouse } from '../src/olap/clickhouse.js';
import { paths } from '../src/olap/insights/paths.queries.js';
import { insertEvents } from '../src/olap/tables/events.table.js';
import { batchInsertSettings } from '../src/olap/tables/insert-settings.js';
import { createSql } from '../src/oltp/db.js';
import { migrateAll } from '../src/runtime/bootstrap.js';
import { createServices } from '../src/runtime/services.js';

const TOTAL = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const RAW_RUNS = Math.max(3, Math.floor(RUNS / 3));
const ONLY_INSIGHTS = process.env.BENCH_ONLY === 'insights';
const ONLY_SESSIONS = process.env.BENCH_ONLY === 'sessions';
const SQL_LOAD = process.env.BENCH_LOAD === 'sql';
const NAIVE = (process.env.BENCH_NAIVE ?? (TOTAL > 20_000_000 ? '0' : '1')) !== '0';
const BATCH = 200_000;
const DAY = 24 * 3600 * 1000;
const NAMES = [
  'feedback_list',
  'feedback_detail',
  'submit_feedback',
  'open_app',
  'purchase',
  'share',
  'search',
  'settings',
  'scroll',
  'tap',
];
const PLANS = ['free', 'pro', 'team'];

const log = (line: string) => process.stdout.write(`${line}\n`);

async function main() {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-bench-metrics-'));
  let database: string | undefined;
  let databaseUrl: string | undefined;
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    database = `feedback_bench_${process.pid}`;
    const admin = createSql(serverUrl, { max: 1 });
    await admin`create database ${admin(database)}`;
    await admin.end();
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    databaseUrl = url.toString();
  }
  const operatorToken = `fbo_bench_${randomBytes(16).toString('hex')}`;
  const config = loadConfig({
    DATA_DIR: dataDir,
    OPERATOR_TOKEN: operatorToken,
    LOG_LEVEL: 'silent',
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const services = await createServices(config, pino({ level: 'silent' }));
  try {
    await migrateAll(services);
    const app = buildApp({ ...services, operatorToken });
    const server: Server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const call = async (method: string, urlPath: string, headers: Record<string, string>, body?: unknown) => {
      const response = await fetch(base + urlPath, {
        method,
        headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const json = (await response.json()) as any;
      if (response.status !== 200) throw new Error(`${method} ${urlPath}: ${response.status} ${JSON.stringify(json)}`);
      return json;
    };

    const account = await call(
      'POST',
      '/api/v1/admin/accounts',
      { authorization: `Bearer ${operatorToken}` },
      { email: 'bench@example.com', plan: 'team' },
    );
    const admin = { authorization: `Bearer ${account.admin_token}` };
    const big = await call('POST', '/api/v1/projects', admin, { name: 'big' });
    const small = [];
    for (let i = 0; i < 10; i++) small.push(await call('POST', '/api/v1/projects', admin, { name: `small ${i}` }));

    // Load: 10M events over the 365 days ending today, in large batches straight into the same
    // insert path the workers use (materialized views fill the rollups as in production).
    const now = Date.now();
    const start = now - 365 * DAY + 60_000;
    const loadStarted = performance.now();
    let loaded = 0;
    // xorshift32, seeded: the same data every run. (The earlier linear congruential step lost
    // precision in doubles and tied each draw to the previous one: only ~1% of users ever did
    // open_app, so funnels had almost no conversions to compute.)
    let seed = 12345;
    const rand = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 4294967296;
    };
    const receivedAt = new Date().toISOString();
    const makeEvents = (projectId: string, count: number): IngestEvent[] =>
      Array.from({ length: count }, () => ({
        project_id: projectId,
        event_id: uuidv7(),
        event_name: NAMES[Math.floor(rand() ** 2 * NAMES.length)] as string,
        user_id: `user-${Math.floor(rand() * USERS)}`,
        // amount: a number from 0 to 100 in cents, for the property math and the numeric filters.
        properties: {
          plan: PLANS[Math.floor(rand() * 3)],
          screen: `s${Math.floor(rand() * 20)}`,
          amount: Math.floor(rand() * 10_001) / 100,
        },
        created_at: new Date(start + rand() * (now - start - 120_000)).toISOString(),
        received_at: receivedAt,
        id_from_client: false,
      }));
    // The same distributions drawn by the engine (its own random streams, so not the same rows):
    // through `events`, so the views fill the rollups and the user-ordered copy as in production.
    const sqlEvents = (projectId: string, count: number) =>
      services.clickhouse.command({
        query: `INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
                SELECT {p:UUID}, fromUnixTimestamp64Milli(toInt64({start:Int64} + randCanonical(5) * {span:Int64}), 'UTC'),
                       generateUUIDv7(number), {names:Array(String)}[toUInt32(floor(pow(randCanonical(1), 2) * length({names:Array(String)}))) + 1],
                       concat('user-', toString(toUInt32(floor(randCanonical(2) * {users:UInt32})))), raw, raw, now64(3)
                FROM (SELECT number, concat('{"plan":"', {plans:Array(String)}[toUInt32(floor(randCanonical(3) * 3)) + 1],
                                            '","screen":"s', toString(toUInt32(floor(randCanonical(4) * 20))),
                                            '","amount":', toString(floor(randCanonical(6) * 10001) / 100), '}') AS raw
                      FROM numbers({count:UInt64}))`,
        query_params: { p: projectId, start, span: now - start - 120_000, names: NAMES, users: USERS, plans: PLANS, count },
        clickhouse_settings: batchInsertSettings(`bench:${uuidv7()}`),
      });
    const batch = SQL_LOAD ? 5_000_000 : BATCH;
    while (loaded < TOTAL) {
      const count = Math.min(batch, TOTAL - loaded);
      if (SQL_LOAD) await sqlEvents(big.id, count);
      else await insertEvents(services.clickhouse, makeEvents(big.id, count), `bench:${uuidv7()}`);
      loaded += count;
      if (loaded % 1_000_000 === 0 || loaded === TOTAL) {
        log(`loaded ${loaded.toLocaleString('en')} events (${((performance.now() - loadStarted) / 1000).toFixed(0)} s)`);
      }
    }
    for (const project of small) {
      if (SQL_LOAD) await sqlEvents(project.id, 20_000);
      else await insertEvents(services.clickhouse, makeEvents(project.id, 20_000), `bench:${uuidv7()}`);
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    // A year of events in production sits in merged parts (ClickHouse merges each month's parts
    // in the background); a bench that queries right after its load would time the many fresh
    // parts of the load instead. So the parts are merged now, and the time it took is printed.
    const mergeStarted = performance.now();
    for (const table of ['events', 'events_by_user']) await services.clickhouse.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    const mergeSeconds = (performance.now() - mergeStarted) / 1000;

    const dateTo = new Date(now).toISOString().slice(0, 10);
    const dateFrom = new Date(now - 364 * DAY).toISOString().slice(0, 10);
    const window = `date_from=${dateFrom}&date_to=${dateTo}`;
    const key = { 'x-api-key': big.api_key };
    const params = { p: big.id, from: `${dateFrom} 00:00:00`, to: `${new Date(now + DAY).toISOString().slice(0, 10)} 00:00:00` };
    const rawWhere = `project_id = {p:UUID} AND created_at >= {from:DateTime64(3, 'UTC')} AND created_at < {to:DateTime64(3, 'UTC')}`;
    const raw = async (query: string) => {
      const result = await services.clickhouse.query({ query, query_params: params, format: 'JSONEachRow' });
      return result.json();
    };

    const cases: BenchCase[] = [
      {
        name: 'summary',
        api: () => call('GET', `/api/v1/metrics/summary?${window}&measures=event_count,unique_event_users`, key),
        raw: () => raw(`SELECT count() AS event_count, uniqExact(user_id) AS unique_event_users FROM events WHERE ${rawWhere}`),
      },
      {
        name: 'timeseries (day)',
        api: () => call('GET', `/api/v1/metrics/timeseries?interval=day&${window}&measures=event_count,unique_event_users`, key),
        raw: () =>
          raw(`SELECT toDate(created_at, 'UTC') AS day, count() AS event_count, uniqExact(user_id) AS unique_event_users
               FROM events WHERE ${rawWhere} GROUP BY day ORDER BY day`),
      },
      {
        name: 'breakdown (event_name)',
        api: () => call('GET', `/api/v1/metrics/breakdown?dimension=event_name&${window}`, key),
        raw: () =>
          raw(`SELECT event_name, count() AS event_count, uniqExact(user_id) AS unique_event_users
               FROM events WHERE ${rawWhere} GROUP BY event_name ORDER BY event_count DESC LIMIT 10`),
      },
      { name: 'events feed (limit 100)', api: () => call('GET', `/api/v1/metrics/events?${window}&limit=100`, key) },
      ...filterCases({ call, key, now, raw, rawWhere, window }),
    ];

    await checkFilterCases(cases);
    // Same answers both ways, before timing anything.
    const summary = (await cases[0]?.api()) as any;
    const [rawSummary] = ((await cases[0]?.raw?.()) ?? []) as any[];
    if (
      Number(rawSummary.event_count) !== summary.measures.event_count ||
      Number(rawSummary.unique_event_users) !== summary.measures.unique_event_users
    ) {
      throw new Error(`rollup and raw disagree: ${JSON.stringify(summary.measures)} vs ${JSON.stringify(rawSummary)}`);
    }

    const time = async (fn: () => Promise<unknown>, runs: number) => {
      await fn(); // warm-up
      const samples: number[] = [];
      // This process's CPU time per run (chDB runs in it, on its own threads): on a shared machine
      // it moves far less with the load than the wall-clock time does.
      const cpu: number[] = [];
      for (let i = 0; i < runs; i++) {
        const c = process.cpuUsage();
        const t = performance.now();
        await fn();
        samples.push(performance.now() - t);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
      }
      samples.sort((a, b) => a - b);
      cpu.sort((a, b) => a - b);
      const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number;
      return { p50: at(0.5), p95: at(0.95), cpuP50: cpu[Math.floor(cpu.length / 2)] as number };
    };

    log('');
    log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB (${(freemem() / 2 ** 30).toFixed(1)} free), node ${process.version}`,
    );
    log(
      `data: ${TOTAL.toLocaleString('en')} events for one Team project over 365 days, ${USERS.toLocaleString('en')} users, 10 small projects; loaded in ${loadSeconds.toFixed(0)} s, parts merged (OPTIMIZE FINAL) in ${mergeSeconds.toFixed(0)} s; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    log(`window: ${dateFrom} .. ${dateTo}; ${RUNS} timed runs per API operation, ${RAW_RUNS} per raw query`);
    log('');
    log('| operation | API p50 ms | API p95 ms | raw scan p50 ms | raw p95 ms | raw p50 / API p50 |');
    log('|---|---|---|---|---|---|');
    for (const c of ONLY_INSIGHTS || ONLY_SESSIONS ? [] : cases) {
      const api = await time(c.api, RUNS);
      const rawTimes = c.raw ? await time(c.raw, RAW_RUNS) : undefined;
      log(
        `| ${c.name} | ${api.p50.toFixed(1)} | ${api.p95.toFixed(1)} | ${rawTimes ? rawTimes.p50.toFixed(1) : 'n/a'} | ${rawTimes ? rawTimes.p95.toFixed(1) : 'n/a'} | ${rawTimes ? `${(rawTimes.p50 / api.p50).toFixed(1)}x` : 'n/a (the feed reads raw events by design)'} |`,
      );
    }
    if (!ONLY_INSIGHTS && !ONLY_SESSIONS) await benchFloors(raw, rawWhere, (fn) => time(fn, RAW_RUNS));
    if (!ONLY_INSIGHTS) await benchSessions({ base, key, admin, projectId: big.id, window, raw, rawWhere, time, call });
    if (ONLY_SESSIONS) {
      server.close();
      return;
    }
    const disk = (await raw(
      `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
       WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table`,
    )) as { table: string; rows: string; bytes: string }[];
    log('');
    log(
      `load average before the insights: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    for (const row of disk) {
      log(
        `disk: ${row.table} ${(Number(row.bytes) / 2 ** 20).toFixed(1)} MiB for ${Number(row.rows).toLocaleString('en')} rows = ${(((Number(row.bytes) / TOTAL) * 1e6) / 1e6).toFixed(2)} MB per million events loaded`,
      );
    }
    const allBytes = disk.reduce((sum, row) => sum + Number(row.bytes), 0);
    log(
      `disk: every table ${(allBytes / 2 ** 30).toFixed(2)} GiB = ${(((allBytes / TOTAL) * 1e6) / 1e6).toFixed(1)} MB per million events loaded`,
    );
    // A second session on the same data directory samples the engine's process list.
    const sampler = createClickHouse({ url: undefined, dataDir });
    try {
      const insights = { base, admin, projectId: big.id, apiKey: big.api_key, dateFrom, dateTo, raw, rawWhere, time, call, sampler };
      await benchInsights(insights);
      await benchPathsShortUsers({ ...insights, clickhouse: services.clickhouse, start: Date.parse(`${dateFrom}T00:00:00Z`) });
      await benchLive(insights);
    } finally {
      await sampler.close();
    }
    server.close();
  } finally {
    await services.close();
    if (serverUrl && database) {
      const admin = createSql(serverUrl, { max: 1 });
      await admin`drop database if exists ${admin(database)} with (force)`;
      await admin.end();
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

// --- Filters, property math, active users and compare (issue 38, docs/metrics.md) -----------

/**
 * The profile of the issue-38 targets: what the engine takes only to read what those queries read,
 * doing the least with it (a count, a sum, one distinct count), in the same run. A target below its
 * floor cannot be met by any query over `events` on this machine, only by storing something else.
 */
async function benchFloors(
  raw: (query: string) => Promise<unknown>,
  rawWhere: string,
  time: (fn: () => Promise<unknown>) => Promise<{ p50: number; p95: number; cpuP50: number }>,
) {
  const floors: [string, string][] = [
    ['the window alone: count()', `SELECT count() FROM events WHERE ${rawWhere}`],
    [
      // The least a filter on these two paths can read: one variant of each (the answer leaves out
      // the 1 % of whole amounts, stored as Int64; the API's filter reads those too).
      'plan eq + amount gte, count() only (String and Float64 variants)',
      `SELECT count() FROM events WHERE ${rawWhere} AND properties.plan.:String = 'pro' AND properties.amount.:Float64 >= 50`,
    ],
    ['amount read, sum() only', `SELECT sum(properties.amount.:Int64) FROM events WHERE ${rawWhere}`],
    ['user_id read, uniqExact() only', `SELECT uniqExact(user_id) FROM events WHERE ${rawWhere}`],
    [
      'user_id and created_at read, grouped by user',
      `SELECT count() FROM (SELECT user_id, max(created_at) FROM events WHERE ${rawWhere} GROUP BY user_id)`,
    ],
    [
      // What one sessions query reads before it splits anything: each user's times, in user order.
      "events_by_user: each user's times gathered, grouped by user_key",
      `SELECT count() FROM (SELECT user_key, groupArray(created_at) FROM events_by_user WHERE ${rawWhere} GROUP BY user_key)`,
    ],
  ];
  log('');
  log('| engine floor over the 365 days (raw SQL) | p50 ms | p95 ms | CPU p50 ms |');
  log('|---|---|---|---|');
  for (const [name, query] of floors) {
    const t = await time(() => raw(query));
    log(`| ${name} | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.cpuP50.toFixed(0)} |`);
  }
}

type BenchCase = { name: string; api: () => Promise<unknown>; raw?: () => Promise<unknown> };

/**
 * The filter language's cases, timed in the same table as the unfiltered ones: a day timeseries
 * with a string eq and a numeric gte filter, p95 of a numeric property, a week timeseries of mau
 * (365 days each), and compare=previous_period on the p95 over the last 182 days next to the same
 * query without it (over 365 days the earlier year lies wholly before the plan's allowance and
 * nothing would be read).
 */
function filterCases(b: {
  call: (method: string, urlPath: string, headers: Record<string, string>) => Promise<any>;
  key: Record<string, string>;
  now: number;
  raw: (query: string) => Promise<unknown>;
  rawWhere: string;
  window: string;
}): BenchCase[] {
  const filters = encodeURIComponent(
    JSON.stringify([
      { property: 'properties.plan', op: 'eq', value: 'pro' },
      { property: 'properties.amount', op: 'gte', value: 50 },
    ]),
  );
  const half = `date_from=${new Date(b.now - 181 * DAY).toISOString().slice(0, 10)}&date_to=${new Date(b.now).toISOString().slice(0, 10)}`;
  return [
    {
      name: 'timeseries (day), plan eq + amount gte filters',
      api: () =>
        b.call(
          'GET',
          `/api/v1/metrics/timeseries?interval=day&${b.window}&measures=event_count,unique_event_users&filters=${filters}`,
          b.key,
        ),
      raw: () =>
        b.raw(`SELECT toDate(created_at, 'UTC') AS day, count() AS event_count, uniqExact(user_id) AS unique_event_users
               FROM events WHERE ${b.rawWhere} AND properties.plan = 'pro' AND properties.amount >= 50 GROUP BY day ORDER BY day`),
    },
    {
      name: 'summary p95:amount',
      api: () => b.call('GET', `/api/v1/metrics/summary?${b.window}&measures=p95:amount`, b.key),
      // Whole amounts are stored as Int64, the others as Float64: the numeric values are both.
      raw: () =>
        b.raw(
          `SELECT quantileExactInclusive(0.95)(coalesce(properties.amount.:Float64, toFloat64(properties.amount.:Int64))) AS p95 FROM events WHERE ${b.rawWhere}`,
        ),
    },
    {
      name: 'timeseries (week) mau',
      api: () => b.call('GET', `/api/v1/metrics/timeseries?interval=week&${b.window}&measures=mau`, b.key),
    },
    { name: 'summary p95:amount, 182 days', api: () => b.call('GET', `/api/v1/metrics/summary?${half}&measures=p95:amount`, b.key) },
    {
      name: 'summary p95:amount, 182 days, compare=previous_period',
      api: () => b.call('GET', `/api/v1/metrics/summary?${half}&measures=p95:amount&compare=previous_period`, b.key),
    },
  ];
}

/** The filtered timeseries and the p95 answer what the same SQL written by hand answers. */
async function checkFilterCases(cases: BenchCase[]) {
  const named = (prefix: string) => {
    const found = cases.find((c) => c.name.startsWith(prefix));
    if (!found?.raw) throw new Error(`bench case ${prefix} is missing`);
    return found as Required<BenchCase>;
  };
  const filtered = named('timeseries (day), plan eq');
  const p95 = named('summary p95:amount');
  const api = (await filtered.api()) as { buckets: { measures: { event_count: number } }[] };
  const rows = (await filtered.raw()) as { event_count: string }[];
  const apiTotal = api.buckets.reduce((sum, bucket) => sum + bucket.measures.event_count, 0);
  const rawTotal = rows.reduce((sum, row) => sum + Number(row.event_count), 0);
  if (apiTotal !== rawTotal || apiTotal === 0) throw new Error(`filtered timeseries: API ${apiTotal} events, raw ${rawTotal}`);
  const apiP95 = ((await p95.api()) as { measures: Record<string, number> }).measures['p95:amount'];
  const [rawP95] = (await p95.raw()) as { p95: number }[];
  if (apiP95 === undefined || Math.abs(apiP95 - Number(rawP95?.p95)) > 1e-9) throw new Error(`p95: API ${apiP95}, raw ${rawP95?.p95}`);
  log(
    `filters: the filtered timeseries counts ${apiTotal.toLocaleString('en')} events and p95:amount is ${apiP95}, as the hand-written SQL`,
  );
}

type Timer = (fn: () => Promise<unknown>, runs: number) => Promise<{ p50: number; p95: number; cpuP50: number }>;

const SESSION_MEASURE_LIST = 'sessions,session_duration_avg,session_duration_median,session_duration_p90,bounce_rate,events_per_session';

/**
 * Sessions (issue 38, docs/sessions.md): the summary of every session measure and a day timeseries
 * of `sessions` over the 365 days, each alone and one after the other (the target is the pair),
 * next to the session count written naively with a window function on `events` (checked equal
 * first, where the naive queries run).
 */
async function benchSessions(b: {
  base: string;
  key: Record<string, string>;
  admin: Record<string, string>;
  projectId: string;
  window: string;
  raw: (query: string) => Promise<unknown>;
  rawWhere: string;
  time: Timer;
  call: (method: string, urlPath: string, headers: Record<string, string>, body?: unknown) => Promise<any>;
}) {
  const summary = () => b.call('GET', `/api/v1/metrics/summary?${b.window}&measures=${SESSION_MEASURE_LIST}`, b.key);
  const series = () => b.call('GET', `/api/v1/metrics/timeseries?interval=day&${b.window}&measures=sessions`, b.key);
  const both = async () => {
    await summary();
    await series();
  };
  // A session starts at an event whose previous event of the same user (in the window) is more
  // than 30 minutes before it, or that has none.
  const naive = () =>
    b.raw(`SELECT count() AS sessions FROM (
             SELECT toUnixTimestamp64Milli(created_at) - lagInFrame(toUnixTimestamp64Milli(created_at), 1, toInt64(-1e12))
                    OVER (PARTITION BY user_id ORDER BY created_at ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS gap
             FROM events WHERE ${b.rawWhere})
           WHERE gap > 1800000`);
  const answer = await summary();
  const day = await series();
  const daySum = day.buckets.reduce((n: number, bucket: { measures: { sessions: number } }) => n + bucket.measures.sessions, 0);
  if (daySum !== answer.measures.sessions) throw new Error(`sessions: summary ${answer.measures.sessions}, day buckets ${daySum}`);
  if (NAIVE) {
    const [row] = (await naive()) as { sessions: string }[];
    if (Number(row?.sessions) !== answer.measures.sessions) {
      throw new Error(`sessions and the window function disagree: ${answer.measures.sessions} vs ${row?.sessions}`);
    }
  }
  log('');
  log(
    `sessions (30-minute timeout, 365 days): ${JSON.stringify(answer.measures)}${NAIVE ? '; the count equals the window function on events' : ''}`,
  );
  log('');
  log('| sessions (365 days) | API p50 ms | API p95 ms | API CPU p50 ms |');
  log('|---|---|---|---|');
  for (const [name, fn] of [
    ['summary (6 session measures)', summary],
    ['timeseries (day) of sessions', series],
    ['summary + day timeseries, one after the other', both],
  ] as const) {
    const t = await b.time(fn, RUNS);
    log(`| ${name} | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${t.cpuP50.toFixed(0)} |`);
  }
  if (NAIVE) {
    const n = await b.time(naive, RAW_RUNS);
    log(`| naive count (lagInFrame on events) | ${n.p50.toFixed(1)} | ${n.p95.toFixed(1)} | ${n.cpuP50.toFixed(0)} |`);
  }
}

/** The insights part: funnel and retention against naive self-joins, then the live view under load. */
async function benchInsights(b: {
  base: string;
  admin: Record<string, string>;
  projectId: string;
  apiKey: string;
  dateFrom: string;
  dateTo: string;
  raw: (query: string) => Promise<unknown>;
  rawWhere: string;
  time: Timer;
  call: (method: string, urlPath: string, headers: Record<string, string>, body?: unknown) => Promise<any>;
  sampler: ClickHouseClient;
}) {
  const steps = ['open_app', 'search', 'purchase'];
  const funnelBody = { steps: steps.map((eventName) => ({ eventName })), dateFrom: b.dateFrom, dateTo: b.dateTo };
  const retentionBody = { interval: 'week', periods: 12, dateFrom: b.dateFrom, dateTo: b.dateTo };
  const funnelApi = () => b.call('POST', `/api/v1/projects/${b.projectId}/insights/funnel`, b.admin, funnelBody);
  const retentionApi = () => b.call('POST', `/api/v1/projects/${b.projectId}/insights/retention`, b.admin, retentionBody);
  const step = (name: string, alias: string) =>
    `(SELECT user_id, created_at FROM events WHERE ${b.rawWhere} AND event_name = '${name}') AS ${alias}`;
  // The definition written as joins: chains a <= b <= c in time with c at most 7 days after a.
  const funnelNaive = () =>
    b.raw(`SELECT
      (SELECT uniqExact(user_id) FROM events WHERE ${b.rawWhere} AND event_name = 'open_app') AS s1,
      (SELECT uniqExact(a.user_id) FROM ${step('open_app', 'a')} INNER JOIN ${step('search', 'b')} ON a.user_id = b.user_id
         WHERE b.created_at >= a.created_at AND b.created_at <= a.created_at + INTERVAL 7 DAY) AS s2,
      (SELECT uniqExact(a.user_id) FROM ${step('open_app', 'a')} INNER JOIN ${step('search', 'b')} ON a.user_id = b.user_id
         INNER JOIN ${step('purchase', 'c')} ON c.user_id = a.user_id
         WHERE b.created_at >= a.created_at AND c.created_at >= b.created_at AND c.created_at <= a.created_at + INTERVAL 7 DAY) AS s3`);
  const retentionNaive = () =>
    b.raw(`SELECT toString(c.cohort) AS cohort, intDiv(dateDiff('day', c.cohort, toMonday(toDate(e.created_at, 'UTC'))), 7) AS period,
             uniqExact(e.user_id) AS users
           FROM events AS e
           INNER JOIN (SELECT user_id, toMonday(toDate(min(created_at), 'UTC')) AS cohort FROM events WHERE ${b.rawWhere} GROUP BY user_id) AS c
             ON e.user_id = c.user_id
           WHERE e.${b.rawWhere.replaceAll(' AND ', ' AND e.')} AND period BETWEEN 0 AND 12
           GROUP BY cohort, period`);

  const pathsBody = { depth: 4, limit: 50, dateFrom: b.dateFrom, dateTo: b.dateTo };
  const pathsApi = (limit = 50) => b.call('POST', `/api/v1/projects/${b.projectId}/insights/paths`, b.admin, { ...pathsBody, limit });
  // Paths written with window functions on events: each user's events by (time, name), repeats
  // dropped (a name equal to the one before), the first 4 kept, each with the name before it.
  const pathsNaive = () =>
    b.raw(`SELECT pos AS step, prev AS "from", name AS "to", count() AS users
           FROM (
             SELECT user_id, name, row_number() OVER u AS pos, lagInFrame(name) OVER u AS prev
             FROM (
               SELECT user_id, toString(event_name) AS name, created_at,
                      lagInFrame(toString(event_name), 1, '') OVER (PARTITION BY user_id ORDER BY created_at, name
                        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS before
               FROM events WHERE ${b.rawWhere}
             )
             WHERE name != before
             WINDOW u AS (PARTITION BY user_id ORDER BY created_at, name ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
           )
           WHERE pos BETWEEN 2 AND 4
           GROUP BY step, "from", "to"`);

  // Same answers both ways, before timing anything (the naive side only where it is run).
  const pathsAnswer = await pathsApi(200);
  const funnel = await funnelApi();
  const users = funnel.steps.map((s: { users: number }) => s.users);
  const retention = await retentionApi();
  if (NAIVE) {
    const naiveEdges = ((await pathsNaive()) as { step: number; from: string; to: string; users: string }[])
      .map((e) => ({ step: Number(e.step), from: e.from, to: e.to, users: Number(e.users) }))
      .sort(edgeOrder)
      .slice(0, 200);
    if (JSON.stringify(pathsAnswer.edges) !== JSON.stringify(naiveEdges)) {
      throw new Error(
        `paths and window functions disagree: ${JSON.stringify(pathsAnswer.edges.slice(0, 5))} vs ${JSON.stringify(naiveEdges.slice(0, 5))}`,
      );
    }
    const [naive] = (await funnelNaive()) as { s1: string; s2: string; s3: string }[];
    if (!naive || JSON.stringify(users) !== JSON.stringify([Number(naive.s1), Number(naive.s2), Number(naive.s3)])) {
      throw new Error(`funnel and self-join disagree: ${JSON.stringify(users)} vs ${JSON.stringify(naive)}`);
    }
    const naiveCells = (await retentionNaive()) as { cohort: string; period: number; users: string }[];
    const apiTotal = retention.cohorts.reduce((n: number, c: { retained: number[] }) => n + c.retained.reduce((x, y) => x + y, 0), 0);
    const naiveTotal = naiveCells.reduce((n, c) => n + Number(c.users), 0);
    if (apiTotal !== naiveTotal) throw new Error(`retention and self-join disagree: ${apiTotal} vs ${naiveTotal}`);
  }
  log('');
  log(
    `funnel ${steps.join(' → ')} (7-day window): users ${users.join(', ')}; retention by week, 12 periods: ${retention.cohorts.length} cohorts; paths (depth 4): ${pathsAnswer.users} users, ${pathsAnswer.edges.length} edges (limit 200)${NAIVE ? '; all equal to the naive answers' : '; naive queries not run (BENCH_NAIVE=0)'}`,
  );
  log('');
  log(
    '| insight (365 days) | API p50 ms | API p95 ms | API CPU p50 ms | API peak memory | naive p50 ms | naive p95 ms | naive CPU p50 ms | naive peak memory | naive p50 / API p50 |',
  );
  log('|---|---|---|---|---|---|---|---|---|---|');
  for (const [name, api, naiveRun] of [
    ['funnel (3 steps)', funnelApi, funnelNaive],
    ['retention (12 weeks)', retentionApi, retentionNaive],
    ['paths (depth 4)', () => pathsApi(), pathsNaive],
  ] as const) {
    const a = await b.time(api, RUNS);
    const aMemory = await peakMemory(b.sampler, api);
    if (!NAIVE) {
      log(`| ${name} | ${a.p50.toFixed(1)} | ${a.p95.toFixed(1)} | ${a.cpuP50.toFixed(0)} | ${mib(aMemory)} | not run | | | | |`);
      continue;
    }
    const n = await b.time(naiveRun, RAW_RUNS);
    const nMemory = await peakMemory(b.sampler, naiveRun);
    log(
      `| ${name} | ${a.p50.toFixed(1)} | ${a.p95.toFixed(1)} | ${a.cpuP50.toFixed(0)} | ${mib(aMemory)} | ${n.p50.toFixed(1)} | ${n.p95.toFixed(1)} | ${n.cpuP50.toFixed(0)} | ${mib(nMemory)} | ${(n.p50 / a.p50).toFixed(1)}x |`,
    );
  }
}

/** Users whose first events repeat one name more than 4 × depth times, added to the project for the paths case of that name. */
const SHORT_USERS = Number(process.env.BENCH_SHORT_USERS ?? 10);

/**
 * Paths with short users (issue 38, section 6): SHORT_USERS users are added to the big project,
 * each with 40 events of one name (more than 4 × depth 4, so their first K events collapse to one
 * name) and then three more names, and paths of depth 4 are timed again: the bounded query names
 * them and a second one reads only their rows. Checked first against the answer that gathers
 * every event of every user (the engine's, in the same process).
 */
async function benchPathsShortUsers(b: {
  projectId: string;
  admin: Record<string, string>;
  dateFrom: string;
  dateTo: string;
  start: number;
  time: Timer;
  call: (method: string, urlPath: string, headers: Record<string, string>, body?: unknown) => Promise<any>;
  sampler: ClickHouseClient;
  clickhouse: ClickHouseClient;
}) {
  await b.clickhouse.command({
    query: `INSERT INTO events (project_id, created_at, event_id, event_name, user_id, properties, properties_raw, received_at)
            SELECT {p:UUID}, fromUnixTimestamp64Milli({start:Int64} + intDiv(number, 43) * 3600000 + (number % 43) * 1000, 'UTC'),
                   generateUUIDv7(number), if(number % 43 < 40, 'scroll', ['search', 'purchase', 'share'][number % 43 - 39]),
                   concat('short-user-', toString(intDiv(number, 43))), '{}', '{}', now64(3)
            FROM numbers({count:UInt64})`,
    query_params: { p: b.projectId, start: b.start + 3_600_000, count: SHORT_USERS * 43 },
    clickhouse_settings: batchInsertSettings(`bench:${uuidv7()}`),
  });
  const body = { depth: 4, limit: 50, dateFrom: b.dateFrom, dateTo: b.dateTo };
  const api = () => b.call('POST', `/api/v1/projects/${b.projectId}/insights/paths`, b.admin, body);
  const answer = await api();
  const window = {
    projectId: b.projectId,
    start: new Date(b.start),
    end: new Date(Date.parse(`${b.dateTo}T00:00:00Z`) + DAY),
    names: null,
  };
  const every = await paths(b.clickhouse, window, { depth: 4 }, { boundedEvents: null });
  const expected = { users: every.users, edges: [...every.edges].sort(edgeOrder).slice(0, 50), paths: every.paths };
  const actual = { users: answer.users, edges: answer.edges, paths: answer.paths };
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(
      `paths with short users and every event disagree: ${JSON.stringify(actual).slice(0, 300)} vs ${JSON.stringify(expected).slice(0, 300)}`,
    );
  }
  const a = await b.time(api, RUNS);
  const memory = await peakMemory(b.sampler, api);
  log('');
  log(
    `paths (depth 4) with ${SHORT_USERS} short users added (40 events of one name first): ${answer.users} users, equal to the answer gathering every event`,
  );
  log('| insight (365 days) | API p50 ms | API p95 ms | API CPU p50 ms | API peak memory |');
  log('|---|---|---|---|---|');
  log(
    `| paths (depth 4, ${SHORT_USERS} short users) | ${a.p50.toFixed(1)} | ${a.p95.toFixed(1)} | ${a.cpuP50.toFixed(0)} | ${mib(memory)} |`,
  );
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

/**
 * The peak memory of the queries `fn` runs, by the engine's own counter: `peak_memory_usage` of
 * system.processes, read every few milliseconds from a second session while `fn` runs (a query
 * without driver parameters, so it never waits behind the measured one). Sampling can only miss
 * the last milliseconds of a peak, so this is a lower bound, close for queries of 100 ms and more.
 */
async function peakMemory(sampler: ClickHouseClient, fn: () => Promise<unknown>): Promise<number> {
  let peak = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const result = await sampler.query({
        query: `SELECT max(peak_memory_usage) AS peak FROM system.processes WHERE query NOT LIKE '%system.processes%'`,
        format: 'JSONEachRow',
        clickhouse_settings: { output_format_json_quote_64bit_integers: 0 },
      });
      const [row] = await result.json<{ peak: number | null }>();
      peak = Math.max(peak, Number(row?.peak ?? 0));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  try {
    await fn();
  } finally {
    running = false;
    await sampling;
  }
  return peak;
}

const LIVE_SECONDS = Number(process.env.BENCH_LIVE_SECONDS ?? 15);
const LIVE_CLIENTS = Number(process.env.BENCH_LIVE_CLIENTS ?? 32);

/**
 * Live view under ingest load: LIVE_CLIENTS connections track events back to back for LIVE_SECONDS
 * while one SSE stream listens; each event carries its send time, and its latency is the time
 * from the request's start to its arrival on the stream.
 */
async function benchLive(b: { base: string; admin: Record<string, string>; projectId: string; apiKey: string }) {
  const abort = new AbortController();
  const response = await fetch(`${b.base}/api/v1/projects/${b.projectId}/live`, { headers: b.admin, signal: abort.signal });
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no live stream');
  const decoder = new TextDecoder();
  const latencies: number[] = [];
  let ready: () => void = () => {};
  const isReady = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const reading = (async () => {
    let buffer = '';
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        const arrived = performance.now();
        for (const block of blocks) {
          if (block.startsWith('event: ready')) ready();
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (!block.includes('event: event') || !data) continue;
          const sent = (JSON.parse(data.slice(6)) as { properties?: { sent?: number } }).properties?.sent;
          if (typeof sent === 'number') latencies.push(arrived - sent);
        }
      }
    } catch {
      // aborted
    }
  })();
  await isReady;
  const until = performance.now() + LIVE_SECONDS * 1000;
  let tracked = 0;
  await Promise.all(
    Array.from({ length: LIVE_CLIENTS }, async (_, i) => {
      while (performance.now() < until) {
        const res = await fetch(`${b.base}/api/v1/events/track`, {
          method: 'POST',
          headers: { 'x-api-key': b.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ eventName: 'open_app', userId: `live-${i}`, properties: { sent: performance.now() } }),
        });
        await res.arrayBuffer();
        if (res.status === 200) tracked++;
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  abort.abort();
  await reading;
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
  log('');
  log(
    `live view under ingest load: ${LIVE_CLIENTS} connections tracking for ${LIVE_SECONDS} s, ${tracked.toLocaleString('en')} events acknowledged (${(tracked / LIVE_SECONDS).toFixed(0)}/s), ${latencies.length.toLocaleString('en')} received on the stream`,
  );
  log(
    `| live latency (request start → on the stream) | p50 ${at(0.5).toFixed(1)} ms | p95 ${at(0.95).toFixed(1)} ms | p99 ${at(0.99).toFixed(1)} ms | max ${at(1).toFixed(1)} ms |`,
  );
}

await main();
process.exit(0);
