import path from 'node:path';
import type { ClickHouseClient } from '../clickhouse.js';
import { FairGate, QueryGate } from './query-gate.js';
import { chdbReadonlyEngine, type ReadonlyEngine, serverReadonlyEngine } from './readonly-session.js';

/** Where one kind of read-only SQL runs (the operator's here; project queries: projectLane below), and how many at a time. */
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

/** The project queries' lane: the engine and the fair gate, with each caller's own time limit. */
export type ProjectLane = Omit<ReadonlyLane, 'gate'> & { gate: FairGate };

/** Time past a query's deadline after which the lane gives its turn back, whether or not the engine has let go. */
export const ABANDON_GRACE_MS = 5_000;

/** One lane per engine: the ClickHouse client of the service, which the JSON route and the interface both hold. */
const projectLanes = new WeakMap<ClickHouseClient, { embedded: boolean; engine: ReadonlyEngine; gate: FairGate }>();

/**
 * The lane of project queries (POST /projects/:id/sql and the ClickHouse interface): one per
 * engine, shared by both, so together they never run more than `maxRunning` queries in the engine
 * and every account gets its fair share of them (FairGate). Embedded chDB: two turns (one per
 * account at most, one thread each), eight waiting; a server: eight turns, six per account, 32
 * waiting. The time limit is each caller's own.
 */
export function projectLane(options: Parameters<typeof readonlyLane>[0] & { onAbandoned?: (label: string) => void }): ProjectLane {
  const embedded = !options.clickhouseUrl;
  const timeoutMs = options.timeoutMs ?? (embedded ? options.defaultTimeoutMs.embedded : options.defaultTimeoutMs.server);
  const retryAfterSeconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  let shared = projectLanes.get(options.clickhouse);
  if (!shared) {
    const maxRunning = embedded ? 2 : 8;
    shared = {
      embedded,
      engine: embedded ? chdbReadonlyEngine(path.join(options.dataDir, 'clickhouse')) : serverReadonlyEngine(options.clickhouse),
      gate: new FairGate({
        maxRunning,
        perAccountRunning: embedded ? 1 : maxRunning - 2,
        maxWaiting: embedded ? 8 : 32,
        retryAfterSeconds,
        maxAbandoned: embedded ? 1 : 4,
        ...(options.onAbandoned ? { onAbandoned: options.onAbandoned } : {}),
      }),
    };
    projectLanes.set(options.clickhouse, shared);
  }
  return { ...shared, timeoutMs, retryAfterSeconds };
}

/** Queries of the project lane the engine may still be working on, given up or not (0 without a lane). */
export function projectQueriesInEngine(clickhouse: ClickHouseClient): number {
  return projectLanes.get(clickhouse)?.gate.inEngine ?? 0;
}
