import { createProjectQueries } from '../../olap/readonly/project-query.js';
import { perApp } from '../define-route.js';

/** The project queries' runner, one per app: it holds the lane, its gate and the per-account limits. */
export const projectQueries = perApp(({ clickhouse, config }) =>
  createProjectQueries({
    clickhouse,
    clickhouseUrl: config.clickhouseUrl,
    dataDir: config.dataDir,
    timeoutMs: config.projectSql.timeoutMs,
    maxMemoryBytes: config.projectSql.maxMemoryBytes,
    accountConcurrency: config.projectSql.accountConcurrency,
  }),
);
