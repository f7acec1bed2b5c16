import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';

export type { ClickHouseClient };

type ChdbAsClientConnection = NonNullable<Parameters<typeof createClient>[0]>['connection'];

export type ClickHouseOptions = {
  /** http(s)://user:password@host:8123/database of a ClickHouse server; unset means embedded chDB. */
  url: string | undefined;
  /** Where embedded chDB keeps its data (one directory per process, bound for its lifetime). */
  dataDir: string;
};

/**
 * One `@clickhouse/client` for both ways to run: over HTTP to a server, or on the real ClickHouse
 * engine of chDB inside this process. Repositories only ever see the ClickHouseClient.
 */
export function createClickHouse(options: ClickHouseOptions): ClickHouseClient {
  if (options.url) {
    return createClient({
      url: options.url,
      request_timeout: 60_000,
      clickhouse_settings: { date_time_input_format: 'best_effort' },
    });
  }
  const dir = path.join(options.dataDir, 'clickhouse');
  mkdirSync(dir, { recursive: true });
  return createClient({
    // chdb implements @clickhouse/client-common's Connection contract; the cast only bridges the
    // two copies of client-common's type declarations that npm may install.
    connection: createChdbConnection({ path: dir }) as unknown as ChdbAsClientConnection,
    clickhouse_settings: { date_time_input_format: 'best_effort' },
  });
}
