import { z } from 'zod';
import { PLAN_LIMITS } from '../../core/plans.js';
import { PREDEFINED_EVENTS } from '../../olap/metrics/measures.js';
import { PROJECT_SQL_MAX_ROWS, ProjectQueryBusy, ProjectQueryRefused } from '../../olap/readonly/project-query.js';
import { TENANT_TABLES } from '../../olap/readonly/tenant-guard.js';
import { defineRoute } from '../define-route.js';
import { AppError, badRequest } from '../errors.js';
import { body, error, json, ProjectPath, reworded, withFieldDocs } from '../shared/building-blocks.js';
import { projectQueries } from '../shared/project-queries.js';
import { type ProjectSqlEcho, projectSqlScope } from '../shared/project-sql-scope.js';
import { ProjectSqlBody } from './project-sql.schema.js';
import { AdhocSqlResponse } from './sql.responses.js';
import { answerSqlResult } from './sql-result-body.js';

export { type ProjectSqlEcho, projectSqlScope } from '../shared/project-sql-scope.js';

/** The result of a project query: the operator's result plus what the plan let it see (SPEC 2.8 names). */
export const ProjectSqlResponse = AdhocSqlResponse.extend({
  event_scope: z.enum(['all', 'predefined_only']).meta({
    description: `\`predefined_only\` when the plan cannot read custom event names: \`events\`, \`events_daily\` and \`events_hourly\` then hold only ${PREDEFINED_EVENTS.map((name) => `\`${name}\``).join(', ')}.`,
  }),
  retention_clamped: z.boolean().meta({ description: 'True when the plan narrowed the requested window (still a 200).' }),
  retention_window_days: z.number().int().min(1).meta({ description: 'The plan’s allowance in days.' }),
  date_from: z.iso.date().meta({ description: 'First day the query could see (UTC, inclusive).' }),
  date_to: z.iso.date().meta({ description: 'Last day the query could see (UTC, inclusive).' }),
}).meta({ id: 'ProjectSqlResult' });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const echoMatches: Same<ProjectSqlEcho, Omit<z.infer<typeof ProjectSqlResponse>, keyof z.infer<typeof AdhocSqlResponse>>> = true;
void echoMatches;

/**
 * POST /projects/:id/sql (admin token of the owning account, or a member's): one read-only
 * ClickHouse query over events, facts, events_daily and events_hourly that sees only this
 * project's rows inside the plan's window and event scope, enforced by the engine
 * (docs/project-sql.md). 400 for a refused or failed query, 429 with Retry-After when the
 * account or the service runs too many at once.
 */
export const projectSqlRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/sql',
    auth: 'projectAdmin',
    operationId: 'runProjectSql',
    tags: ['Projects'],
    summary: 'Run one read-only SQL query on the project’s analytics data',
    description:
      `One read-only ClickHouse SELECT over ${TENANT_TABLES.map((t) => `\`${t}\``).join(', ')} (docs/project-sql.md). ` +
      'ClickHouse itself adds the project, the window and the plan’s event scope to every read of these tables, wherever the query names them; ' +
      'any other table, database-qualified name outside the service’s database, system table, dictionary or table function other than a row generator (`numbers`, `values`, …) is refused with 400, ' +
      'and so are the operator SQL’s refusals (a second statement, writes, SETTINGS, functions that reach files or the network). ' +
      `At most ${PROJECT_SQL_MAX_ROWS.toLocaleString('en')} rows and 16 MiB of rows (a 400 past it), parameter values of 256 KiB each; time (the wait for a turn included) 5 s with embedded chDB or 10 s with a server (PROJECT_SQL_TIMEOUT_MS), memory PROJECT_SQL_MAX_MEMORY_MB. ` +
      `The window defaults to the plan’s allowance (${PLAN_LIMITS.free.metricsWindowDays} days on Free and Pro, ${PLAN_LIMITS.team.metricsWindowDays} on Team) ending today, and is clamped to it. ` +
      '429 with Retry-After when the account already runs PROJECT_SQL_ACCOUNT_CONCURRENCY queries (default 2), or too many project queries wait.',
    params: ProjectPath,
    body: reworded(
      body(
        withFieldDocs(ProjectSqlBody, {
          query: 'One SELECT (no SETTINGS clause), with `{name:Type}` parameters.',
          params: 'Values of the query’s parameters, by name.',
          dateFrom: 'First day to see (UTC). Default: the plan’s allowance before dateTo.',
          dateTo: 'Last day to see (UTC). Default: today.',
        }),
        'ProjectSqlRequest',
      ),
      'Field names are given in camelCase; the snake_case spelling of each top-level field (`date_from` for `dateFrom`) is accepted too. When both are sent, the camelCase one wins.',
    ),
    responses: {
      200: json('The result, with the window and event scope that applied.', ProjectSqlResponse),
      400: error('Validation failed (the reason names the field), or the query was refused or failed (`query: …`).'),
      default: error('Any other failure, in the server-wide error body (413, 500, 503 with Retry-After).'),
    },
    handler: async (ctx, deps, { project, body }) => {
      const input = body;
      const { scope, echo } = projectSqlScope(project, input);
      try {
        const result = await projectQueries(deps).run(project.account_id, scope, input.query, input.params);
        answerSqlResult(ctx, result, echo);
      } catch (error) {
        if (error instanceof ProjectQueryRefused) throw badRequest(`query: ${error.message}`);
        if (error instanceof ProjectQueryBusy) {
          throw new AppError(429, `query: ${error.message}`, { 'Retry-After': String(error.retryAfterSeconds) });
        }
        throw error;
      }
    },
  }),
];
