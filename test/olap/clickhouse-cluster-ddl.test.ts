import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLICKHOUSE_CLUSTER_MIGRATIONS_DIR, CLICKHOUSE_MIGRATIONS_DIR } from '../../src/olap/migrations.js';

/*
 * The cluster migrations (sql/clickhouse/cluster/) are written by hand next to the single-server
 * ones. This test keeps the two from drifting: with the cluster-only parts taken out (ON CLUSTER,
 * the Replicated engine's Keeper path, the Distributed table over each `_local` table, and the
 * `_local` suffix), each cluster file must say exactly what its single-server file says.
 */

const statementsOf = (sql: string) =>
  sql
    .split('\n')
    .map((line) => line.replace(/--.*$/, ''))
    .join(' ')
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter((statement) => statement.length > 0);

const DISTRIBUTED =
  /^CREATE TABLE IF NOT EXISTS (\w+) ON CLUSTER '\{cluster\}' AS (\w+)_local ENGINE = Distributed\('\{cluster\}', currentDatabase\(\), '(\w+)_local'(, [^)]*\))?\)$/;

/** A cluster file's statements, as they would read on one server. */
function asSingleServer(sql: string): string[] {
  const out: string[] = [];
  for (const statement of statementsOf(sql)) {
    const distributed = DISTRIBUTED.exec(statement);
    if (distributed) {
      // The Distributed table carries the single-server name over its own shards' local table.
      expect(distributed[2]).toBe(distributed[1]);
      expect(distributed[3]).toBe(distributed[1]);
      continue;
    }
    const local = statement
      .replaceAll(" ON CLUSTER '{cluster}'", '')
      .replace(/Replicated(\w*MergeTree)\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/\{table\}', '\{replica\}'\)/g, '$1')
      .replaceAll('replicated_deduplication_window', 'non_replicated_deduplication_window')
      .replace(/\b(\w+)_local\b/g, '$1');
    // A column comment is set on the local table and on the Distributed one: the same statement twice.
    if (!out.includes(local)) out.push(local);
  }
  return out;
}

const files = readdirSync(CLICKHOUSE_MIGRATIONS_DIR)
  .filter((name) => name.endsWith('.sql'))
  .sort();

describe('ClickHouse cluster migrations', () => {
  it('has a cluster variant of every single-server migration, and no other', () => {
    const cluster = readdirSync(CLICKHOUSE_CLUSTER_MIGRATIONS_DIR)
      .filter((name) => name.endsWith('.sql'))
      .sort();
    expect(cluster).toEqual(files);
  });

  it.each(files)('%s differs from its cluster variant only in replication and distribution', (name) => {
    // A backfill (INSERT … SELECT) is the one statement a cluster variant may leave out: an INSERT
    // cannot run ON CLUSTER (sql/clickhouse/cluster/008_event_ids.sql). When it keeps one (through
    // the Distributed tables, run once by the node that migrates: 009_events_by_user.sql), it says
    // what the single-server one says.
    const clusterText = readFileSync(path.join(CLICKHOUSE_CLUSTER_MIGRATIONS_DIR, name), 'utf8');
    const keepsBackfill = statementsOf(clusterText).some((statement) => statement.startsWith('INSERT INTO '));
    const single = statementsOf(readFileSync(path.join(CLICKHOUSE_MIGRATIONS_DIR, name), 'utf8')).filter(
      (statement) => keepsBackfill || !statement.startsWith('INSERT INTO '),
    );
    const cluster = asSingleServer(clusterText);
    expect(cluster).toEqual(single);
  });
});
