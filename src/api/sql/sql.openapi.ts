import { OPERATOR_TOKEN, body, defaultError, error, json, withFieldDocs, type Route } from '../openapi/building-blocks.js';
import { AdhocSqlBody } from './sql.router.js';
import { AdhocSqlResponse } from './sql.responses.js';

const requestBodies = () => ({
  adhocSql: body(
    withFieldDocs(AdhocSqlBody, {
      query: 'One SELECT (no SETTINGS clause), with `{name:Type}` parameters.',
      params: 'Values of the query’s parameters, by name.',
    }),
    'AdhocSqlRequest',
  ),
});

/** The operator's ad-hoc ClickHouse query (DESIGN 3). */
export function registerSqlPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'post',
    path: '/admin/sql',
    operationId: 'runAdhocSql',
    tags: ['Operator'],
    summary: 'Run one read-only ClickHouse query',
    description:
      'One read-only SELECT (docs/sql-safety.md): readonly, 10,000 rows and 16 MiB of rows (a 400 past it), parameter values of 256 KiB each, 5 s with embedded chDB or 10 s with a server (OPERATOR_SQL_TIMEOUT_MS, the wait for a turn included); SETTINGS clauses and table functions or functions that reach files, the network or processes are refused. `params` are the values of the query’s `{name:Type}` parameters. 429 with Retry-After when too many operator queries are running or waiting.',
    security: OPERATOR_TOKEN,
    request: { body: requests.adhocSql },
    responses: {
      200: json('The result.', AdhocSqlResponse),
      400: error('Validation failed, or the query was refused or failed (`query: …`).'),
      401: error('Missing or invalid operator token.'),
      default: defaultError,
    },
  });
}
