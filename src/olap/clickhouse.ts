import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type ClickHouseClient, type ClickHouseSettings, createClient } from '@clickhouse/client';
import type * as ChdbConnectionModule from 'chdb/connection';
import { isolateChdbResults } from './chdb-result-isolation.js';
import { scopeChdbSettings } from './chdb-settings-scope.js';

export type { ClickHouseClient };

type ChdbAsClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection'];

export type ClickHouseOptions = {
  /** http(s)://user:password@host:8123/database of a ClickHouse server; unset means embedded chDB. */
  url: string | undefined;
  /** Where embedded chDB keeps its data (one directory per process, bound for its lifetime). */
  dataDir: string;
  /**
   * Name of the ClickHouse cluster whose Distributed tables the service reads and writes
   * (CLICKHOUSE_CLUSTER); server only. Unset: a single server.
   */
  cluster?: string | undefined;
};

/**
 * Settings of every query on a cluster, where `events`, `facts` and the rollups are Distributed
 * tables over Replicated ones (sql/clickhouse/cluster/):
 * - an insert returns once each shard has written its rows to one of its replicas (not when they
 *   are only queued on the node that took the insert), so an acknowledged event is stored, and a
 *   retried batch, split the same way, is dropped by its deduplication token on every shard;
 * - a query whose JOIN or IN reads another Distributed table runs that side once and sends the
 *   result to every shard (GLOBAL), which is exact whatever the sharding keys.
 */
export const CLUSTER_SETTINGS: ClickHouseSettings = {
  distributed_foreground_insert: 1,
  distributed_product_mode: 'global',
};

const require = createRequire(import.meta.url);

/**
 * chDB (the `chdb` package, an optional dependency of ~550 MB) is loaded only for embedded
 * ClickHouse, so an install without it (`npm ci --omit=optional`, as the Docker image does)
 * runs against a server.
 */
function loadChdbConnection(): typeof ChdbConnectionModule {
  try {
    return require('chdb/connection') as typeof ChdbConnectionModule;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && /'chdb\//.test(String(error))) {
      throw new Error(
        'embedded ClickHouse needs the optional package chdb, which is not installed: run `npm install` (without --omit=optional), or set CLICKHOUSE_URL to a ClickHouse server',
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * One `@clickhouse/client` for both ways to run: over HTTP to a server, or on the real ClickHouse
 * engine of chDB inside this process. Repositories only ever see the ClickHouseClient.
 */
export function createClickHouse(options: ClickHouseOptions): ClickHouseClient {
  if (options.url) {
    return createClient({
      url: options.url,
      request_timeout: 60_000,
      clickhouse_settings: {
        date_time_input_format: 'best_effort',
        ...(options.cluster ? CLUSTER_SETTINGS : {}),
      },
    });
  }
  if (options.cluster) throw new Error('a ClickHouse cluster needs a server (CLICKHOUSE_URL); embedded chDB is one process');
  const { createChdbConnection } = loadChdbConnection();
  const dir = path.join(options.dataDir, 'clickhouse');
  mkdirSync(dir, { recursive: true });
  return createClient({
    // chdb implements @clickhouse/client-common's Connection contract; the cast only bridges the
    // two copies of client-common's type declarations that npm may install. A failed query's
    // partial output must never reach the next result on the connection (chdb-result-isolation.ts),
    // nor a request's settings the next request (chdb-settings-scope.ts).
    connection: isolateChdbResults(scopeChdbSettings(createChdbConnection({ path: dir }))) as unknown as ChdbAsClientConnection,
    clickhouse_settings: { date_time_input_format: 'best_effort' },
  });
}
