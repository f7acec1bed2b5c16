import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sql } from './db.js';

export const POSTGRES_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/postgres/', import.meta.url));

/** Arbitrary constant: the advisory lock key all migrators of this service agree on. */
const MIGRATION_LOCK_KEY = 7_202_611_220;

type MigrationFile = { version: string; name: string; text: string; checksum: string };

/**
 * Applies the numbered `.sql` files of `dir` that the ledger table does not list yet, in order,
 * in one transaction. A transaction-level advisory lock makes a second migrator (another process
 * starting at the same time) wait and then find nothing left to do. A file changed after it was
 * applied is refused rather than silently skipped: migrations are forward-only.
 */
export async function migratePostgres(sql: Sql, dir = POSTGRES_MIGRATIONS_DIR): Promise<string[]> {
  const files = await readMigrationFiles(dir);
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`
      create table if not exists schema_migrations (
        version     text primary key,
        name        text not null,
        checksum    text not null,
        applied_at  timestamptz not null default now()
      )`;
    const applied = new Map(
      (await tx<{ version: string; checksum: string }[]>`select version, checksum from schema_migrations`).map((row) => [
        row.version,
        row.checksum,
      ]),
    );
    const done: string[] = [];
    for (const file of files) {
      const checksum = applied.get(file.version);
      if (checksum !== undefined) {
        if (checksum !== file.checksum) {
          throw new Error(`Migration ${file.name} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      // The file is ours, never request input; the simple protocol runs its several statements.
      await tx.unsafe(file.text).simple();
      await tx`
        insert into schema_migrations (version, name, checksum)
        values (${file.version}, ${file.name}, ${file.checksum})`;
      done.push(file.name);
    }
    return done;
  });
}

async function readMigrationFiles(dir: string): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((name) => /^\d+_[\w-]+\.sql$/.test(name)).sort();
  return Promise.all(
    names.map(async (name) => {
      const text = await readFile(path.join(dir, name), 'utf8');
      return {
        version: name.split('_')[0] as string,
        name,
        text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    }),
  );
}
