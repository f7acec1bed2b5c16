import { eventually } from './eventually.js';
import type { TestServer } from './server.js';

/*
 * Whether a query is in the engine, read from ClickHouse's system.processes through the server's
 * own client: embedded chDB lists the queries of every session of this process there, the
 * read-only lanes' sessions (operator and project SQL) included.
 */

async function runningWith(server: TestServer, fragment: string): Promise<number> {
  const rows = await server.clickhouseRows<{ n: string }>(
    "SELECT count() AS n FROM system.processes WHERE position(query, {fragment:String}) > 0 AND position(query, 'system.processes') = 0",
    { fragment },
  );
  return Number(rows[0]?.n ?? 0);
}

/** Waits until a query whose text contains `fragment` runs in the engine. */
export function untilRunning(server: TestServer, fragment: string, timeoutMs = 30_000): Promise<number> {
  return eventually(`a query with “${fragment}” in the engine`, timeoutMs, async () => (await runningWith(server, fragment)) > 0);
}

/** Waits until no query whose text contains `fragment` runs in the engine any more. */
export function untilNoneRunning(server: TestServer, fragment: string, timeoutMs = 60_000): Promise<number> {
  return eventually(`no query with “${fragment}” in the engine`, timeoutMs, async () => (await runningWith(server, fragment)) === 0);
}
