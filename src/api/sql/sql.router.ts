import { Router } from '@koa/router';
import { z } from 'zod';
import { AdhocQueryBusy, AdhocQueryRefused, createAdhocQueries } from '../../olap/adhoc-query.js';
import { operatorAuth } from '../auth.js';
import type { ApiDeps } from '../deps.js';
import { AppError, badRequest } from '../errors.js';
import type { AppState } from '../state.js';
import { answerSqlResult } from './sql-result-body.js';
import { bodySchema, parseBody } from '../validation.js';

/**
 * A parameter value at most this long. A value travels to embedded chDB as a `SET param_…`
 * statement, which ClickHouse parses under max_query_size (256 KiB by default): past it the engine
 * failed and the request answered 500. The bound is checked here, with a 400 naming the
 * parameter; the engine's limit is raised above it (readonly-session.ts), escaping included.
 */
export const SQL_PARAM_MAX_CHARS = 256 * 1024;

export const AdhocSqlBody = bodySchema({
  query: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters'),
  /** Values of the query's {name:Type} parameters. */
  params: z
    .record(
      z.string().regex(/^\w{1,64}$/, 'parameter names are letters, digits and _'),
      z.union([
        z.string().max(SQL_PARAM_MAX_CHARS, `must be at most ${SQL_PARAM_MAX_CHARS} characters (256 KiB)`),
        z.number(),
        z.boolean(),
      ]),
    )
    .optional()
    .default({}),
});
export type AdhocSqlBody = z.infer<typeof AdhocSqlBody>;

/**
 * POST /admin/sql (operator token): one read-only ClickHouse query, answered as JSON. This is how
 * SQL reaches embedded ClickHouse, whose data directory the running service holds. What is
 * refused and how: docs/sql-safety.md. 429 with Retry-After when too many operator queries wait.
 */
export function sqlRouter({ clickhouse, config, operatorToken }: ApiDeps): Router<AppState> {
  const router = new Router<AppState>();
  const queries = createAdhocQueries({
    clickhouse,
    clickhouseUrl: config.clickhouseUrl,
    dataDir: config.dataDir,
    timeoutMs: config.operatorSqlTimeoutMs,
  });
  router.post('/admin/sql', operatorAuth(operatorToken), async (ctx) => {
    const body = parseBody(AdhocSqlBody, ctx.request.body);
    try {
      answerSqlResult(ctx, await queries.run(body.query, body.params), {});
    } catch (error) {
      if (error instanceof AdhocQueryRefused) throw badRequest(`query: ${error.message}`);
      if (error instanceof AdhocQueryBusy) {
        throw new AppError(429, `query: ${error.message}`, { 'Retry-After': String(error.retryAfterSeconds) });
      }
      throw error;
    }
  });
  return router;
}
