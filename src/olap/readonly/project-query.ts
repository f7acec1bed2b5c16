import type { ClickHouseClient } from '../clickhouse.js';
import { withEngineHint } from './engine-hints.js';
import { type FairRelease, QueryGateBusy } from './query-gate.js';
import type { AstVerdict } from './readonly-ast-guard.js';
import { ABANDON_GRACE_MS, projectLane } from './readonly-lane.js';
import {
  jsonLines,
  type PreparedStatement,
  READONLY_RESULT_MAX_BYTES,
  type ReadonlyAnswer,
  ReadonlyQueryRefused,
  type ReadonlyStream,
  readonlyAnswer,
  runReadonlyQuery,
  streamReadonlyQuery,
} from './readonly-query.js';
import type { ParamValue, ReadonlyEngine, ReadonlySession } from './readonly-session.js';
import { introspectionTableFilters, type TenantScope, tenantTableFilters } from './tenant-filters.js';
import { judgeQueryTree, judgeTenantAst, type TenantCatalog, type TenantReach } from './tenant-guard.js';

export type { TenantScope } from './tenant-filters.js';
/** Refusal of a project query: a 400 with this message. */
/** No turn for a project query (the account's or the service's limit): a 429 with Retry-After. */
export { QueryGateBusy as ProjectQueryBusy, ReadonlyQueryRefused as ProjectQueryRefused };

export const PROJECT_SQL_MAX_ROWS = 10_000;
/** Default limit of a project query with embedded chDB, which shares the service's process. */
export const PROJECT_SQL_EMBEDDED_TIMEOUT_MS = 5_000;
/** Default limit of a project query with a ClickHouse server. */
export const PROJECT_SQL_SERVER_TIMEOUT_MS = 10_000;
export const PROJECT_SQL_DEFAULT_MEMORY_BYTES = 512 * 1024 * 1024;
export const PROJECT_SQL_DEFAULT_ACCOUNT_CONCURRENCY = 2;

export type ProjectQueries = {
  /** Runs one read-only query of `accountId` that sees only the rows of `scope` (docs/project-sql.md). */
  run(accountId: string, scope: TenantScope, text: string, params: Record<string, ParamValue>): Promise<ReadonlyAnswer>;
  /**
   * The same query, streamed in the engine's own output format (the ClickHouse interface,
   * docs/clickhouse-interface.md): the same filters, checks, gate and per-account limit, up to
   * `maxRows` rows (more fail the query in the engine). The turn ends when the stream has ended.
   */
  stream(
    accountId: string,
    scope: TenantScope,
    text: string,
    params: Record<string, ParamValue>,
    options: ProjectStreamOptions,
  ): Promise<ReadonlyStream>;
};

export type ProjectStreamOptions = {
  /** The statement sent, as the engine printed it, turned into what runs (its FORMAT, SHOW, DESCRIBE). */
  prepare: (single: string, session: ReadonlySession, database: string) => Promise<PreparedStatement>;
  /** Checked output settings of the request (readonly-session.ts, extraSettings). */
  settings?: Readonly<Record<string, string | number>>;
  /** A lower time limit the request asked for, in milliseconds. */
  timeoutMs?: number | undefined;
  /** Fewer rows than the lane's limit, as the request asked. */
  maxRows?: number | undefined;
  /** Aborted when the client has gone. */
  signal?: AbortSignal;
};

export type ProjectQueriesOptions = {
  /** The service's client; used as is with a ClickHouse server. */
  clickhouse: ClickHouseClient;
  /** CLICKHOUSE_URL: unset means embedded chDB in this process. */
  clickhouseUrl: string | undefined;
  /** DATA_DIR, whose clickhouse/ directory embedded chDB holds. */
  dataDir: string;
  /** A query's whole time, its wait for a turn included; unset: the mode's default. */
  timeoutMs?: number | undefined;
  /** max_memory_usage of one query. */
  maxMemoryBytes?: number | undefined;
  /** Queries of one account running or waiting at once; more get a 429. */
  accountConcurrency?: number | undefined;
  maxRows?: number;
  /** Bytes of output at most (the engine's max_result_bytes); default 16 MiB, the JSON route's. */
  maxResultBytes?: number;
  /** How refusals name the queries; default "project queries". */
  label?: string;
  /** Told of each query the lane gave up on (the engine had not let go of it past its deadline). */
  onAbandoned?: (label: string) => void;
};

/**
 * Tenant SQL (POST /projects/:id/sql): the operator's read-only path (readonly-query.ts: one
 * statement, read-only session, parse-tree guard, a deadline that counts the wait) with three
 * additions:
 * - the session carries `additional_table_filters` for the four tenant tables, so the engine
 *   adds the project, window and event-name filter to every read of them, wherever it appears in
 *   the query (subquery, CTE, JOIN, UNION, IN, database-qualified name);
 * - the statement may read only those tables (tenant-guard.ts), checked on the engine's parse and
 *   on its resolution, so no read goes around the filters;
 * - memory is bounded, and so are the queries of one account at a time.
 * With embedded chDB, project queries run on sessions of their own, one at a time on one thread,
 * outside chdb's parameter chain, like operator queries: metrics and ingestion never wait for them.
 */
export function createProjectQueries(options: ProjectQueriesOptions): ProjectQueries {
  const { embedded, engine, timeoutMs, retryAfterSeconds, gate } = projectLane({
    ...options,
    defaultTimeoutMs: { embedded: PROJECT_SQL_EMBEDDED_TIMEOUT_MS, server: PROJECT_SQL_SERVER_TIMEOUT_MS },
  });
  const label = options.label ?? 'project queries';
  const database = embedded ? 'default' : serverDatabase(options.clickhouseUrl ?? '');
  const perAccount = options.accountConcurrency ?? PROJECT_SQL_DEFAULT_ACCOUNT_CONCURRENCY;
  const inFlight = new Map<string, number>();
  const maxRows = options.maxRows ?? PROJECT_SQL_MAX_ROWS;
  const maxMemoryBytes = options.maxMemoryBytes ?? PROJECT_SQL_DEFAULT_MEMORY_BYTES;
  const maxResultBytes = options.maxResultBytes ?? READONLY_RESULT_MAX_BYTES;

  /** A place of the account and a turn of the gate, until `until` settles; QueryGateBusy otherwise. */
  async function admit(accountId: string, deadline: number): Promise<(until: Promise<void>) => void> {
    const mine = inFlight.get(accountId) ?? 0;
    if (mine >= perAccount) {
      throw new QueryGateBusy(`this account already runs ${perAccount} SQL queries; retry later`, retryAfterSeconds);
    }
    inFlight.set(accountId, mine + 1);
    let gone = false;
    const leave = () => {
      if (gone) return;
      gone = true;
      const left = (inFlight.get(accountId) ?? 1) - 1;
      if (left > 0) inFlight.set(accountId, left);
      else inFlight.delete(accountId);
    };
    let release: FairRelease;
    try {
      release = await gate.enter(accountId, deadline, label);
    } catch (error) {
      leave();
      throw error;
    }
    return (until) => {
      // The turn is given back once the engine is done, or ABANDON_GRACE_MS past the deadline at
      // the latest (the query was cancelled at its deadline; FairGate says why).
      release(until, deadline + ABANDON_GRACE_MS);
      const giveUp = setTimeout(leave, Math.max(0, deadline + ABANDON_GRACE_MS - Date.now()));
      giveUp.unref();
      const done = () => {
        clearTimeout(giveUp);
        leave();
      };
      void until.then(done, done);
    };
  }

  return {
    async stream(accountId, scope, text, params, streamOptions) {
      const limitMs = Math.min(timeoutMs, streamOptions.timeoutMs ?? timeoutMs);
      const deadline = Date.now() + limitMs;
      const end = await admit(accountId, deadline);
      // Settles once the engine is done with every statement of the query: after the stream ended.
      let engineDone: (settled: Promise<void>) => void = () => {};
      const idle = new Promise<void>((resolve) => {
        engineDone = (settled) => void settled.then(resolve, resolve);
      });
      try {
        const remainingMs = deadline - Date.now();
        if (remainingMs < 50) throw new QueryGateBusy('the time limit ran out while earlier project queries ran; retry later', 1);
        const reach: TenantReach = { introspection: true };
        const stream = await streamReadonlyQuery(
          engine,
          text,
          params,
          {
            timeoutMs: remainingMs,
            maxRows: Math.min(maxRows, streamOptions.maxRows ?? maxRows),
            maxThreads: embedded ? 1 : 0,
            maxMemoryBytes,
            maxResultBytes,
            // Blocks of 1,024 rows (the session's default), not the engine's 65,409: with embedded
            // chDB a block lives in this process, and one of wide rows was hundreds of MB
            // (test/api/clickhouse-stream-bounds.test.ts); measured no slower (BENCHMARKS.md, issue 29).
            engineOutputDefaults: true,
            tableFilters: { ...tenantTableFilters(scope, database), ...introspectionTableFilters(database) },
            extraSettings: streamOptions.settings,
          },
          {
            prepare: (single, session) => streamOptions.prepare(single, session, database),
            // The catalog comes from a session without the introspection filters: through them,
            // system.tables shows only the tenant tables, and any other table of the database
            // (a materialized view) would pass for a CTE name.
            check: async (statement, astRows, session) =>
              tenantCheck(statement, astRows, session, database, reach, await unfilteredCatalog(engine, remainingMs)),
            onEngineIdle: (settled) => engineDone(settled),
            ...(streamOptions.signal ? { signal: streamOptions.signal } : {}),
          },
        );
        return { ...stream, pieces: hinted(stream.pieces) };
      } catch (error) {
        engineDone(Promise.resolve()); // refused before a session was open, or after it closed
        throw withEngineHint(error);
      } finally {
        // The turn and the account's place end when the engine is done with the query.
        end(idle);
      }
    },

    async run(accountId, scope, text, params) {
      const started = performance.now();
      const deadline = Date.now() + timeoutMs;
      const end = await admit(accountId, deadline);
      let idle: Promise<void> = Promise.resolve();
      try {
        const remainingMs = deadline - Date.now();
        if (remainingMs < 50) throw new QueryGateBusy('the time limit ran out while earlier project queries ran; retry later', 1);
        const result = await runReadonlyQuery(
          engine,
          text,
          params,
          {
            timeoutMs: remainingMs,
            maxRows,
            // One thread in embedded mode: metrics and ingestion keep the other cores.
            maxThreads: embedded ? 1 : 0,
            maxMemoryBytes,
            maxResultBytes: READONLY_RESULT_MAX_BYTES,
            tableFilters: tenantTableFilters(scope, database),
          },
          {
            onEngineIdle: (settled) => (idle = settled),
            check: (statement, astRows, session) => tenantCheck(statement, astRows, session, database),
          },
        );
        return readonlyAnswer(result, started);
      } catch (error) {
        throw withEngineHint(error);
      } finally {
        // The turn and the account's place end when the engine is done, not when the caller was answered.
        end(idle);
      }
    },
  };
}

/** The pieces of a stream, its error (the engine's, once the output began) with the fix hint of a known one. */
async function* hinted(pieces: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  try {
    yield* pieces;
  } catch (error) {
    throw withEngineHint(error);
  }
}

/**
 * The tenant's narrowing, run on the query's own read-only session: its parse names only the
 * allowed tables (so resolving it reads nothing else), then the engine's resolution of it reads
 * only those tables. The session must be in the database whose tables the filters name.
 */
const CATALOG_QUERY =
  'SELECT currentDatabase() AS database, groupArray(name) AS tables FROM system.tables WHERE database = currentDatabase()';

/** The service's database and every table in it, read on a read-only session of its own, without row filters. */
async function unfilteredCatalog(engine: ReadonlyEngine, timeoutMs: number): Promise<TenantCatalog> {
  const session = await engine.open({ timeoutMs, maxResultRows: 10, maxThreads: 1, maxResultBytes: 16 * 1024 * 1024 }, {});
  try {
    const [catalog] = jsonLines<TenantCatalog>(await session.run(CATALOG_QUERY, 'JSONEachRow'));
    if (!catalog) throw new Error('the ClickHouse catalog query answered no row');
    return catalog;
  } finally {
    session.close();
  }
}

async function tenantCheck(
  statement: string,
  astRows: string[],
  session: ReadonlySession,
  database: string,
  reach: TenantReach = {},
  /** The catalog when the session's own system.tables is filtered (the interface). */
  given?: TenantCatalog,
): Promise<AstVerdict> {
  const [own] = jsonLines<TenantCatalog>(
    await session.run(given ? 'SELECT currentDatabase() AS database, [] AS tables' : CATALOG_QUERY, 'JSONEachRow'),
  );
  const catalog = given && own ? { ...given, database: own.database } : own;
  if (!catalog || catalog.database !== database)
    throw new Error(`the ClickHouse session is in database ${catalog?.database ?? '?'}, not ${database}`);
  const parsed = judgeTenantAst(astRows, catalog, reach);
  if (!parsed.ok) return parsed;
  const tree = jsonLines<{ explain: string }>(await session.run(`EXPLAIN QUERY TREE ${statement}`, 'JSONEachRow'));
  return judgeQueryTree(
    tree.map((row) => row.explain),
    database,
    reach,
  );
}

/** The database of a CLICKHOUSE_URL (its path, as @clickhouse/client reads it), else `default`. */
function serverDatabase(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\/+|\/+$/g, ''));
  return name === '' ? 'default' : name;
}
