import { randomBytes } from 'node:crypto';
import { appendFile, copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { createSql, type Sql } from '../../src/oltp/db.js';
import { migratePostgres, POSTGRES_MIGRATIONS_DIR } from '../../src/oltp/migrations.js';
import { databaseUrlFor } from '../helpers/database.js';
import { eventually } from '../helpers/eventually.js';
import { stopWhenDone } from '../helpers/lifecycle.js';
import { logLines, makeDataDir, serviceEnv, spawnScript } from '../helpers/process.js';

/**
 * The advisory lock key all migrators agree on (MIGRATION_LOCK_KEY in src/oltp/migrations.ts).
 * The concurrency test holds it to make sure both migrators are really waiting at the same time.
 */
const MIGRATION_LOCK_KEY = 7_202_611_220;

const serverUrl = inject('postgresServerUrl');

/**
 * A fresh, empty database of its own (a name outside the run's prefix that global teardown drops),
 * and a client of it: both gone when the test finishes, after the processes it spawned later.
 */
async function freshDatabase(): Promise<{ name: string; url: string; sql: Sql }> {
  const name = `feedback_migrate_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = createSql(serverUrl, { max: 1 });
  try {
    await admin`create database ${admin(name)}`;
  } finally {
    await admin.end({ timeout: 5 });
  }
  stopWhenDone(async () => {
    const dropper = createSql(serverUrl, { max: 1 });
    try {
      await dropper`drop database if exists ${dropper(name)} with (force)`;
    } finally {
      await dropper.end({ timeout: 5 });
    }
  });
  const url = databaseUrlFor(serverUrl, name);
  const sql = createSql(url, { max: 1 });
  stopWhenDone(() => sql.end({ timeout: 5 }));
  return { name, url, sql };
}

/** A temporary directory (mode 700, as mkdtemp makes it), removed when the test finishes. */
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'feedback-migrations-'));
  stopWhenDone(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function migrationFiles(): Promise<string[]> {
  return (await readdir(POSTGRES_MIGRATIONS_DIR)).filter((name) => /^\d+_[\w-]+\.sql$/.test(name)).sort();
}

/** Every table the migration files create. */
async function tablesOfMigrations(): Promise<string[]> {
  const tables: string[] = [];
  for (const file of await migrationFiles()) {
    const text = await readFile(path.join(POSTGRES_MIGRATIONS_DIR, file), 'utf8');
    for (const match of text.matchAll(/create table (?:if not exists )?([a-z_][a-z0-9_]*)/gi)) tables.push(match[1] as string);
  }
  return tables;
}

type LedgerRow = { version: string; name: string; checksum: string; applied_at: Date };

async function ledger(sql: Sql): Promise<LedgerRow[]> {
  return sql<LedgerRow[]>`select version, name, checksum, applied_at from schema_migrations order by version`;
}

async function missingTables(sql: Sql, tables: string[]): Promise<string[]> {
  const rows = await sql<{ name: string; found: string | null }[]>`
    select t.name, to_regclass(t.name)::text as found from unnest(${tables}::text[]) as t(name)`;
  return rows.filter((row) => row.found === null).map((row) => row.name);
}

describe('npm run migrate (tsx src/migrate.ts)', () => {
  it('two migrators started at the same moment both succeed and apply each file exactly once; a third run is a no-op', async () => {
    const db = await freshDatabase();
    const files = await migrationFiles();
    const env = serviceEnv({ DATABASE_URL: db.url, DATA_DIR: await makeDataDir(), LOG_LEVEL: 'info' });

    // Hold the migrators' lock so that both are provably waiting on it at the same time, then let go.
    const gate = await db.sql.reserve();
    let gateHeld = true;
    try {
      await gate`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
      const procs = [spawnScript('src/migrate.ts', env), spawnScript('src/migrate.ts', env)];
      try {
        await eventually('both migrators wait on the advisory lock', 20_000, async () => {
          const failed = procs.find((proc) => proc.exit);
          if (failed) throw new Error(`a migrator exited while the lock was held\n${failed.describe()}`);
          const [row] = await gate<{ waiting: number }[]>`
            select count(*)::int as waiting from pg_locks
            where locktype = 'advisory' and not granted
              and database = (select oid from pg_database where datname = current_database())`;
          return row?.waiting === 2;
        });
      } finally {
        await gate`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
        gateHeld = false;
      }
      const exits = await Promise.all(procs.map((proc) => proc.waitForExit(20_000)));
      for (const [i, exit] of exits.entries()) expect(exit, procs[i]?.describe()).toEqual({ code: 0, signal: null });

      // Across both processes, every file was applied once: one did the work, the other found nothing left.
      const appliedByEach = procs.map((proc) => {
        const line = logLines(proc.stdout).find((entry) => Array.isArray(entry.postgres));
        expect(line, proc.describe()).toBeDefined();
        return line?.postgres as string[];
      });
      expect(appliedByEach.flat().sort()).toEqual(files);
      expect(appliedByEach.map((applied) => applied.length).sort()).toEqual([0, files.length]);
    } finally {
      if (gateHeld) await gate`select pg_advisory_unlock_all()`.catch(() => undefined);
      gate.release();
    }

    const before = await ledger(db.sql);
    expect(before.map((row) => row.name)).toEqual(files);
    expect(await missingTables(db.sql, await tablesOfMigrations())).toEqual([]);

    const third = spawnScript('src/migrate.ts', env);
    expect(await third.waitForExit(20_000), third.describe()).toEqual({ code: 0, signal: null });
    const line = logLines(third.stdout).find((entry) => Array.isArray(entry.postgres));
    expect(line, third.describe()).toMatchObject({ postgres: [], clickhouse: [], msg: 'schema up to date' });
    expect(await ledger(db.sql)).toEqual(before);
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts

  it('exits 1 with the reason on stderr when the database cannot be reached', async () => {
    const db = await freshDatabase();
    const unreachable = databaseUrlFor(db.url, `${db.name}_missing`);
    const proc = spawnScript('src/migrate.ts', serviceEnv({ DATABASE_URL: unreachable, DATA_DIR: await makeDataDir() }));
    const exit = await proc.waitForExit(20_000);
    expect(exit.code, proc.describe()).toBe(1);
    expect(proc.stderr).toContain(`${db.name}_missing`);
  }, 300_000); // a loaded machine: PROCESS_TEST_TIMEOUT_MS of test/helpers/process.ts
});

describe('migratePostgres', () => {
  it('applies every file in order on a fresh database, then nothing the second time', async () => {
    const db = await freshDatabase();
    const files = await migrationFiles();
    expect(await migratePostgres(db.sql)).toEqual(files);
    const first = await ledger(db.sql);
    expect(first.map((row) => row.name)).toEqual(files);
    expect(first.map((row) => row.version)).toEqual(files.map((file) => file.split('_')[0]));
    expect(await migratePostgres(db.sql)).toEqual([]);
    expect(await ledger(db.sql)).toEqual(first);
    expect(await missingTables(db.sql, await tablesOfMigrations())).toEqual([]);
  });

  it('refuses a migration whose file changed after it was applied, and changes nothing', async () => {
    const db = await freshDatabase();
    const dir = await tempDir();
    const [firstFile] = await migrationFiles();
    if (!firstFile) throw new Error('no migration files');
    await copyFile(path.join(POSTGRES_MIGRATIONS_DIR, firstFile), path.join(dir, firstFile));
    expect(await migratePostgres(db.sql, dir)).toEqual([firstFile]);
    const applied = await ledger(db.sql);

    await appendFile(path.join(dir, firstFile), '\n-- edited after it was applied\n');
    await expect(migratePostgres(db.sql, dir)).rejects.toThrow(new RegExp(`${firstFile.replace('.', '\\.')} was changed`));
    expect(await ledger(db.sql)).toEqual(applied);
  });

  it('applies all pending files in one transaction: a failing file leaves no trace of the others', async () => {
    const db = await freshDatabase();
    const dir = await tempDir();
    const [firstFile] = await migrationFiles();
    if (!firstFile) throw new Error('no migration files');
    await copyFile(path.join(POSTGRES_MIGRATIONS_DIR, firstFile), path.join(dir, firstFile));
    await writeFile(path.join(dir, '999_broken.sql'), 'create table half_done (id int);\nselect * from no_such_table;\n');

    await expect(migratePostgres(db.sql, dir)).rejects.toThrow(/no_such_table/);
    const firstTables = [
      ...(await readFile(path.join(dir, firstFile), 'utf8')).matchAll(/create table (?:if not exists )?([a-z_][a-z0-9_]*)/gi),
    ].map((match) => match[1] as string);
    const rolledBack = ['schema_migrations', 'half_done', ...firstTables];
    expect(firstTables.length).toBeGreaterThan(0);
    expect(await missingTables(db.sql, rolledBack)).toEqual(rolledBack);
  });
});
