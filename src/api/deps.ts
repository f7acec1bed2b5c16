import type { Logger } from '../logger.js';
import type { Sql } from '../oltp/db.js';

/** What the HTTP layer needs, built once at start-up (src/context.ts) or by a test. */
export type ApiDeps = {
  sql: Sql;
  logger: Logger;
  operatorToken: string;
};
