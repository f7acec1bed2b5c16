import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseClient } from './clickhouse.js';
import { batchInsertSettings } from './tables/insert-settings.js';

/** Migrations of a single ClickHouse server (and of embedded chDB). */
export const CLICKHOUSE_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/clickhouse/', import.meta.url));
/**
 * The same migrations for a ClickHouse cluster (CLICKHOUSE_CLUSTER): each file has the version
 * of its single-server counterpart and creates `<table>_local` Replicated tables on every node
 * (ON CLUSTER '{cluster}') and a Distributed table of the single-server name over them, so the
 * service's queries are the same on both.
 */
export const CLICKHOUSE_CLUSTER_MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/clickhouse/cluster/', import.meta.url));

export type ClickHouseMigrationOptions = {
  /** Cluster name (remote_servers): use the cluster migrations, with `{cluster}` replaced by it. */
  cluster?: string | undefined;
  /** Directory of the migrations; default: the one for a single server or for the cluster. */
  dir?: string;
};

/** `{cluster}` is the one placeholder of the cluster migrations; other macros ({shard}, {replica}) are the servers'. */
export function substituteCluster(statement: string, cluster: string): string {
  return statement.replaceAll('{cluster}', cluster);
}

/** The ledger. On a cluster one replicated table spans every node, so any node reads the same ledger. */
function ledgerDdl(cluster: string | undefined): string {
  const onCluster = cluster ? ` ON CLUSTER '${cluster}'` : '';
  const engine = cluster
    ? "ReplicatedReplacingMergeTree('/clickhouse/tables/{database}/schema_migrations', '{shard}-{replica}')"
    : 'ReplacingMergeTree';
  return `
      CREATE TABLE IF NOT EXISTS schema_migrations${onCluster}
      (
          version    String COMMENT 'numeric prefix of the migration file',
          name       String COMMENT 'file name',
          checksum   String COMMENT 'sha256 of the file as applied',
          applied_at DateTime64(3, 'UTC') DEFAULT now64(3) COMMENT 'when the migration was applied'
      )
      ENGINE = ${engine}
      ORDER BY version`;
}

/**
 * Applies the numbered `.sql` files of the migrations directory that the `schema_migrations`
 * ledger does not list, in order. ClickHouse has no transactions or locks, so every statement is
 * written to be idempotent (`IF NOT EXISTS`): a second migrator running at the same time does no
 * harm. A file may hold several statements separated by `;` at a line end. The checksum is that
 * of the file as shipped (before the cluster name is put in).
 */
export async function migrateClickHouse(client: ClickHouseClient, options: ClickHouseMigrationOptions = {}): Promise<string[]> {
  const cluster = options.cluster;
  const dir = options.dir ?? (cluster ? CLICKHOUSE_CLUSTER_MIGRATIONS_DIR : CLICKHOUSE_MIGRATIONS_DIR);
  await client.command({ query: ledgerDdl(cluster) });
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
      await client.command({ query: cluster ? substituteCluster(statement, cluster) : statement });
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
