import type { Config } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { createClickHouse } from '../olap/clickhouse.js';
import { migrateAll } from './bootstrap.js';
import { openPostgres } from './services.js';

/**
 * `npm run migrate`: applies pending migrations and exits; safe to run twice or concurrently.
 * ClickHouse is migrated here only on a server (CLICKHOUSE_URL): embedded chDB's directory
 * belongs to the running API process, which migrates it at start.
 */
export async function run(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const postgres = await openPostgres(config, logger);
  const clickhouse = config.clickhouseUrl
    ? createClickHouse({ url: config.clickhouseUrl, dataDir: config.dataDir, cluster: config.clickhouseCluster })
    : undefined;
  try {
    await migrateAll({ sql: postgres.sql, clickhouse, logger, config });
  } finally {
    await clickhouse?.close();
    await postgres.close();
  }
}
