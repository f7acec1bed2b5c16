import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from './clickhouse.js';
import { batchInsertSettings } from './insert-settings.js';

export const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/clickhouse/', import.meta.url));

/**
 * Applies the numbered `.sql` files of `dir` that the `schema_migrations` ledger does not list,
 * in order. ClickHouse has no transactions or locks, so every statement is written to be
 * idempotent (`IF NOT EXISTS`): a second migrator running at the same time does no harm. A file
 * may hold several statements separated by `;` at a line end.
 */
export async function migrateClickHouse(client: ClickHouseClient, dir = CLICKHOUSE_MIGRATIONS_DIR): Promise<string[]> {
  await client.command({
    query: `
      CREATE TABLE IF NOT EXISTS schema_migrations
      (
          version    String COMMENT 'numeric prefix of the migration file',
          name       String COMMENT 'file name',
          checksum   String COMMENT 'sha256 of the file as applied',
          applied_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'when the migration was applied'
      )
      ENGINE = ReplacingMergeTree
      ORDER BY version`,
  });
  const result = await client.query({
    query: 'SELECT version, argMax(checksum, applied_at) AS checksum FROM schema_migrations GROUP BY version',
    format: 'JSONEachRow',
  });
  const applied = new Map((await result.json<{ version: string; checksum: string }>()).map((r) => [r.version, r.checksum]));
  const names = (await readdir(dir)).filter((name) => /^\d+_[\w-]+\.sql$/.test(name)).sort();
  const done: string[] = [];
  for (const name of names) {
    const text = await readFile(path.join(dir, name), 'utf8');
    const version = name.split('_')[0] as string;
    const checksum = createHash('sha256').update(text).digest('hex');
    const previous = applied.get(version);
    if (previous !== undefined) {
      if (previous !== checksum) throw new Error(`ClickHouse migration ${name} was changed after it was applied; add a new one`);
      continue;
    }
    for (const statement of splitStatements(text)) {
      await client.command({ query: statement });
    }
    await client.insert({
      table: 'schema_migrations',
      values: [{ version, name, checksum }],
      format: 'JSONEachRow',
      // Its own token: chDB keeps settings for the session, and a token left by an earlier
      // insert would make this row look like a duplicate of that batch.
      clickhouse_settings: batchInsertSettings(`migration:${version}:${checksum}`),
    });
    done.push(name);
  }
  return done;
}

/** Splits a migration file on `;` at the end of a line; comment-only chunks are dropped. */
export function splitStatements(text: string): string[] {
  return text
    .split(/;\s*$/m)
    .map((chunk) => chunk.trim())
    .filter((chunk) => chunk.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
}
