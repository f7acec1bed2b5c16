import type { ClickHouseClient } from '../clickhouse.js';
import { QueryGateBusy } from './query-gate.js';
import { readonlyLane } from './readonly-lane.js';
import {
  READONLY_RESULT_MAX_BYTES,
  type ReadonlyAnswer,
  ReadonlyQueryRefused,
  readonlyAnswer,
  runReadonlyQuery,
} from './readonly-query.js';
import type { ParamValue } from './readonly-session.js';

export const ADHOC_MAX_ROWS = 10_000;
/** Default limit of an operator query with embedded chDB, which shares the service's process. */
export const ADHOC_EMBEDDED_TIMEOUT_MS = 5_000;
/** Default limit of an operator query with a ClickHouse server. */
export const ADHOC_SERVER_TIMEOUT_MS = 10_000;

/** Refusal of an operator query: a 400 with this message. */
/** No turn for an operator query: a 429 with Retry-After. */
export { QueryGateBusy as AdhocQueryBusy, ReadonlyQueryRefused as AdhocQueryRefused };

export type AdhocQueries = {
  /** Runs one read-only query of an operator (docs/sql-safety.md). */
  run(text: string, params: Record<string, ParamValue>): Promise<ReadonlyAnswer>;
};

export type AdhocQueriesOptions = {
  /** The service's client; used as is with a ClickHouse server. */
  clickhouse: ClickHouseClient;
  /** CLICKHOUSE_URL: unset means embedded chDB in this process. */
  clickhouseUrl: string | undefined;
  /** DATA_DIR, whose clickhouse/ directory embedded chDB holds. */
  dataDir: string;
  /** A query's whole time, its wait for a turn included (OPERATOR_SQL_TIMEOUT_MS); unset: the mode's default. */
  timeoutMs?: number | undefined;
  maxRows?: number;
};

/**
 * Operator SQL (POST /admin/sql). With embedded chDB the engine shares this process with the
 * service's interactive work, so operator queries run on sessions of their own, one at a time
 * (a few wait their turn, more are refused), on one thread each, and stay out of chdb's
 * process-wide parameter chain (readonly-session.ts). With a server they run side by side.
 */
export function createAdhocQueries(options: AdhocQueriesOptions): AdhocQueries {
  const { embedded, engine, timeoutMs, gate } = readonlyLane({
    ...options,
    defaultTimeoutMs: { embedded: ADHOC_EMBEDDED_TIMEOUT_MS, server: ADHOC_SERVER_TIMEOUT_MS },
  });
  const maxRows = options.maxRows ?? ADHOC_MAX_ROWS;
  return {
    async run(text, params) {
      const started = performance.now();
      const deadline = Date.now() + timeoutMs;
      const release = await gate.enter(deadline);
      let idle: Promise<void> = Promise.resolve();
      try {
        const remainingMs = deadline - Date.now();
        if (remainingMs < 50) throw new QueryGateBusy('the time limit ran out while earlier operator queries ran; retry later', 1);
        const result = await runReadonlyQuery(
          engine,
          text,
          params,
          // One thread in embedded mode: metrics and ingestion keep the other cores.
          { timeoutMs: remainingMs, maxRows, maxThreads: embedded ? 1 : 0, maxResultBytes: READONLY_RESULT_MAX_BYTES },
          { onEngineIdle: (settled) => (idle = settled) },
        );
        return readonlyAnswer(result, started);
      } finally {
        // The turn ends when the engine is done, even if the caller was answered at the deadline.
        void idle.then(release, release);
      }
    },
  };
}
