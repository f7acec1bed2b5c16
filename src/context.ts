import type { ApiDeps } from './api/deps.js';
import type { Config } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { createSql, type Sql } from './oltp/db.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './oltp/embedded-postgres.js';
import { resolveOperatorToken } from './operator-token.js';

export type AppContext = ApiDeps & {
  config: Config;
  /** true when this start generated the operator token (first embedded start). */
  operatorTokenCreated: boolean;
  /** Closes every client, then stops the embedded servers this context started. */
  close(): Promise<void>;
};

/**
 * Builds every client of the process from the config, once (STYLE: one place wires everything).
 * Without DATABASE_URL it first starts the embedded PostgreSQL under DATA_DIR.
 */
export async function createAppContext(config: Config, logger: Logger = createLogger(config.logLevel)): Promise<AppContext> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const pgLog = logger.child({ component: 'embedded-postgres' });
    embedded = await startEmbeddedPostgres(config.dataDir, (line) => pgLog.debug(line));
    databaseUrl = embedded.url;
    logger.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  }
  const sql: Sql = createSql(databaseUrl);
  const operator = await resolveOperatorToken(config.operatorToken, config.dataDir);
  return {
    config,
    logger,
    sql,
    operatorToken: operator.token,
    operatorTokenCreated: operator.created,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}
