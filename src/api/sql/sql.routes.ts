import { z } from 'zod';
import { AdhocQueryBusy, AdhocQueryRefused, createAdhocQueries } from '../../olap/readonly/adhoc-query.js';
import { defineRoute, perApp } from '../define-route.js';
import { AppError, badRequest } from '../errors.js';
import { body, defaultError, error, json, withFieldDocs } from '../shared/building-blocks.js';
import { bodySchema } from '../validation.js';
import { AdhocSqlResponse } from './sql.responses.js';
import { answerSqlResult } from './sql-result-body.js';

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

/** The operator's query runner, one per app: it holds the lane and its gate of waiting queries. */
const adhocQueries = perApp(({ clickhouse, config }) =>
  createAdhocQueries({
    clickhouse,
    clickhouseUrl: config.clickhouseUrl,
    dataDir: config.dataDir,
    timeoutMs: config.operatorSqlTimeoutMs,
  }),
);

/**
 * POST /admin/sql (operator token): one read-only ClickHouse query, answered as JSON (DESIGN 3).
 * This is how SQL reaches embedded ClickHouse, whose data directory the running service holds.
 * What is refused and how: docs/sql-safety.md. 429 with Retry-After when too many operator
 * queries wait.
 */
export const sqlRoutes = [
  defineRoute({
    method: 'post',
    path: '/admin/sql',
    auth: 'operatorToken',
    operationId: 'runAdhocSql',
    tags: ['Operator'],
    summary: 'Run one read-only ClickHouse query',
    description:
      'One read-only SELECT (docs/sql-safety.md): readonly, 10,000 rows and 16 MiB of rows (a 400 past it), parameter values of 256 KiB each, 5 s with embedded chDB or 10 s with a server (OPERATOR_SQL_TIMEOUT_MS, the wait for a turn included); SETTINGS clauses and table functions or functions that reach files, the network or processes are refused. `params` are the values of the query’s `{name:Type}` parameters. 429 with Retry-After when too many operator queries are running or waiting.',
    body: body(
      withFieldDocs(AdhocSqlBody, {
        query: 'One SELECT (no SETTINGS clause), with `{name:Type}` parameters.',
        params: 'Values of the query’s parameters, by name.',
      }),
      'AdhocSqlRequest',
    ),
    responses: {
      200: json('The result.', AdhocSqlResponse),
      400: error('Validation failed, or the query was refused or failed (`query: …`).'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
    handler: async (ctx, deps, { body: input }) => {
      try {
        answerSqlResult(ctx, await adhocQueries(deps).run(input.query, input.params), {});
      } catch (error) {
        if (error instanceof AdhocQueryRefused) throw badRequest(`query: ${error.message}`);
        if (error instanceof AdhocQueryBusy) {
          throw new AppError(429, `query: ${error.message}`, { 'Retry-After': String(error.retryAfterSeconds) });
        }
        throw error;
      }
    },
  }),
];
