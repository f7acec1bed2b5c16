import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ClickHouseClient, createClickHouse } from '../../src/olap/clickhouse.js';
import { migrateClickHouse } from '../../src/olap/migrations.js';
import { provide } from './lifecycle.js';

export type EmbeddedClickHouse = { clickhouse: ClickHouseClient; dataDir: string; remove: () => Promise<void> };

/**
 * A migrated embedded ClickHouse for the tests of this file or describe block (call it there):
 * made before them, closed and removed after them (lifecycle.ts).
 */
export function useEmbeddedClickHouse(prefix: string): EmbeddedClickHouse {
  return provide(
    'embedded ClickHouse',
    () => embeddedClickHouse(prefix),
    (chdb) => chdb.remove(),
  );
}

/** A migrated embedded ClickHouse (chDB) in a fresh temporary DATA_DIR, and how to remove it. */
export async function embeddedClickHouse(prefix: string): Promise<EmbeddedClickHouse> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  const clickhouse = createClickHouse({ url: undefined, dataDir });
  await migrateClickHouse(clickhouse);
  return {
    clickhouse,
    dataDir,
    remove: async () => {
      await clickhouse.close();
      await rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}
