import path from 'node:path';
import type { ClickHouseClient } from '../clickhouse.js';
import { QueryGate } from './query-gate.js';
import { chdbReadonlyEngine, type ReadonlyEngine, serverReadonlyEngine } from './readonly-session.js';

/** Where one kind of read-only SQL (the operator's, a project's) runs, and how many at a time. */
export type ReadonlyLane = {
  embedded: boolean;
  engine: ReadonlyEngine;
  /** A query's whole time, its wait for a turn included. */
  timeoutMs: number;
  retryAfterSeconds: number;
  gate: QueryGate;
};

/**
 * With embedded chDB the engine shares this process with the service's interactive work, so such
 * queries run on sessions of their own, one at a time (a few wait their turn, more are refused),
 * outside chdb's process-wide parameter chain (readonly-session.ts). With a server they run side
 * by side.
 */
export function readonlyLane(options: {
  /** The service's client; used as is with a ClickHouse server. */
  clickhouse: ClickHouseClient;
  /** CLICKHOUSE_URL: unset means embedded chDB in this process. */
  clickhouseUrl: string | undefined;
  /** DATA_DIR, whose clickhouse/ directory embedded chDB holds. */
  dataDir: string;
  /** The configured limit; unset: the mode's default. */
  timeoutMs?: number | undefined;
  defaultTimeoutMs: { embedded: number; server: number };
  /** How refusals name the queries (QueryGate's label). */
  label?: string;
}): ReadonlyLane {
  const embedded = !options.clickhouseUrl;
  const engine = embedded ? chdbReadonlyEngine(path.join(options.dataDir, 'clickhouse')) : serverReadonlyEngine(options.clickhouse);
  const timeoutMs = options.timeoutMs ?? (embedded ? options.defaultTimeoutMs.embedded : options.defaultTimeoutMs.server);
  const retryAfterSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  const gate = new QueryGate({
    maxRunning: embedded ? 1 : 4,
    maxWaiting: embedded ? 4 : 16,
    retryAfterSeconds,
    ...(options.label ? { label: options.label } : {}),
  });
  return { embedded, engine, timeoutMs, retryAfterSeconds, gate };
}
