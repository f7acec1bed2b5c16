import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ClickHouseClient, createClickHouse } from '../../src/olap/clickhouse.js';
import { migrateClickHouse } from '../../src/olap/migrations.js';

/** A migrated embedded ClickHouse (chDB) in a fresh temporary DATA_DIR, and how to remove it. */
export async function embeddedClickHouse(
  prefix: string,
): Promise<{ clickhouse: ClickHouseClient; dataDir: string; remove: () => Promise<void> }> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `${prefix}-`));
  const clickhouse = createClickHouse({ url: undefined, dataDir });
  await migrateClickHouse(clickhouse);
  return {
    clickhouse,
    dataDir,
    remove: async () => {
      await clickhouse.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
