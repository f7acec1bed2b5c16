import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopWhenDone } from './lifecycle.js';
import { builtScriptArgs } from './service-build.js';

/** The repository root: the working directory of every spawned service process. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every variable the service reads (src/core/config.ts); the test decides each of them per case. */
const SERVICE_VARIABLES = [
  'PORT',
  'HOST',
  'DATA_DIR',
  'DATABASE_URL',
  'CLICKHOUSE_URL',
  'CLICKHOUSE_CLUSTER',
  'REDIS_URL',
  'QUEUE_PREFIX',
  'INGEST_WORKER_CONCURRENCY',
  'INGEST_LOG_MAX_BYTES',
  'INGEST_LOG_SHUTDOWN_SECONDS',
  'OPERATOR_SQL_TIMEOUT_MS',
  'PROJECT_SQL_TIMEOUT_MS',
  'PROJECT_SQL_MAX_MEMORY_MB',
  'PROJECT_SQL_ACCOUNT_CONCURRENCY',
  'LIVE_MAX_CONNECTIONS_PER_ACCOUNT',
  'LIVE_HEARTBEAT_SECONDS',
  'METRICS_PORT',
  'CLICKHOUSE_INTERFACE_PORT',
  'OPERATOR_TOKEN',
  'LOG_LEVEL',
  'SHUTDOWN_TIMEOUT_MS',
] as const;

/**
 * The environment of a spawned process: this process's environment without any of the
 * service's own variables, plus exactly the ones given (undefined leaves a variable unset).
 */
export function serviceEnv(vars: Partial<Record<(typeof SERVICE_VARIABLES)[number], string | undefined>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of SERVICE_VARIABLES) delete env[name];
  // Service processes run side by side in tests: none takes the fixed default metrics port, or
  // the ClickHouse interface's own port (a test that needs it passes a free one).
  env.METRICS_PORT = '0';
  env.CLICKHOUSE_INTERFACE_PORT = '0';
  for (const [name, value] of Object.entries(vars)) if (value !== undefined) env[name] = value;
  return env;
}

export type Exit = { code: number | null; signal: NodeJS.Signals | null };

/**
 * The least time a test gives a spawned process to reach a condition (print a line, exit). On a
 * loaded machine (load 8 to 15 on 2 cores: other test files, other work) a process takes several
 * times as long as on an idle one: `src/main.ts` with PORT=abc took 14 s to exit at load 24
 * against 2 s idle (measured), and the start-up tests' 15 s limits failed (issue 28). A wait ends
 * as soon as its condition holds, so a generous limit costs a passing run nothing: the wait
 * helpers below raise any smaller limit to this one, and a failing run says what it waited for.
 * Tests that start processes give themselves a timeout above it (PROCESS_TEST_TIMEOUT_MS).
 */
export const PROCESS_WAIT_FLOOR_MS = 120_000;

/** A test timeout for a test that starts a process and waits for it once or twice. */
export const PROCESS_TEST_TIMEOUT_MS = 300_000;

/** The limit a wait really gets: the caller's, or the floor if that is longer. */
const generous = (timeoutMs: number) => Math.max(timeoutMs, PROCESS_WAIT_FLOOR_MS);

/** A child process running a script of the repository, whose output is collected as it arrives. */
export class ServiceProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  exit: Exit | undefined;
  /** Resolves once the process has exited and its output pipes are closed. */
  readonly exited: Promise<Exit>;
  private readonly listeners = new Set<() => void>();

  /**
   * `args` replaces the default (then `script` only names the process in messages): a script of
   * src/ runs from the suite's build of the service (service-build.ts), any other with tsx.
   */
  constructor(script: string, env: NodeJS.ProcessEnv, args: readonly string[] = builtScriptArgs(script) ?? tsxArgs(script)) {
    // A process group of its own, so cleanup can also reach whatever the service started
    // (the embedded PostgreSQL) if the service itself fails to stop it.
    // Node itself, no wrapper process between us and the service, so signals reach the service.
    this.child = spawn(process.execPath, [...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      this.notify();
    });
    this.exited = new Promise<Exit>((resolve) => {
      this.child.once('error', (error) => {
        this.stderr += `spawn error: ${error.message}\n`;
        this.exit ??= { code: null, signal: null };
        this.notify();
        resolve(this.exit);
      });
      this.child.once('close', (code, signal) => {
        this.exit = { code, signal };
        this.notify();
        resolve(this.exit);
      });
    });
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('process did not start');
    return this.child.pid;
  }

  private notify() {
    for (const listener of [...this.listeners]) listener();
  }

  /** What the process printed so far, for assertion messages. */
  describe(): string {
    return `exit=${JSON.stringify(this.exit ?? null)}\n--- stdout ---\n${this.stdout}\n--- stderr ---\n${this.stderr}`;
  }

  /**
   * Waits until stdout matches; fails on timeout or when the process exits first. The limit is at
   * least PROCESS_WAIT_FLOOR_MS.
   */
  waitForStdout(pattern: RegExp, timeoutMs: number = PROCESS_WAIT_FLOOR_MS): Promise<RegExpMatchArray> {
    const limitMs = generous(timeoutMs);
    return new Promise((resolve, reject) => {
      const check = () => {
        const match = this.stdout.match(pattern);
        if (match) return finish(() => resolve(match));
        if (this.exit) return finish(() => reject(new Error(`process exited before printing ${pattern}\n${this.describe()}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`timed out after ${limitMs} ms waiting for ${pattern}\n${this.describe()}`))),
        limitMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.listeners.delete(check);
        settle();
      };
      this.listeners.add(check);
      check();
    });
  }

  /**
   * Waits for the exit; fails on timeout (the process is left running for cleanup to kill). The
   * limit is at least PROCESS_WAIT_FLOOR_MS.
   */
  waitForExit(timeoutMs: number = PROCESS_WAIT_FLOOR_MS): Promise<Exit> {
    return this.exitWithin(generous(timeoutMs));
  }

  /** The exit within exactly `timeoutMs`: cleanup's own short waits, which end in a kill anyway. */
  private async exitWithin(timeoutMs: number): Promise<Exit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms\n${this.describe()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a signal to the process itself (tsx relays it to the service). */
  signal(signal: NodeJS.Signals) {
    if (!this.exit) this.child.kill(signal);
  }

  private stopped: Promise<void> | undefined;

  /**
   * Cleanup: asks a running process to stop (SIGTERM, bounded wait), then kills its whole
   * process group, which also takes any server it left behind. Once: later calls wait for it.
   */
  stop(graceMs = 10_000): Promise<void> {
    this.stopped ??= this.stopNow(graceMs);
    return this.stopped;
  }

  private async stopNow(graceMs: number): Promise<void> {
    if (this.child.pid === undefined) return;
    if (!this.exit) {
      this.child.kill('SIGTERM');
      await this.exitWithin(graceMs).catch(() => undefined);
    }
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
    await this.exitWithin(5_000).catch(() => undefined);
  }
}

const running = new Set<ServiceProcess>();

/** Tracks a spawned process: stopped when the test that spawned it finishes, or after the file (lifecycle.ts). */
function tracked(proc: ServiceProcess): ServiceProcess {
  running.add(proc);
  stopWhenDone(async () => {
    running.delete(proc);
    await proc.stop();
  });
  return proc;
}

/**
 * Spawns `tsx <script>` (relative to the repository root) with exactly this environment. Stopped
 * when the test that spawned it finishes, or, spawned in a hook, after the file.
 */
export function spawnScript(script: string, env: NodeJS.ProcessEnv): ServiceProcess {
  return tracked(new ServiceProcess(script, env));
}

/** `node --import tsx <script>`: how the npm scripts run it (`npm start`). */
export const tsxArgs = (script: string) => ['--import', 'tsx', script];

/** Spawns `<script>` exactly as its npm script does, with tsx's loader (not the suite's build). */
export function spawnScriptWithTsx(script: string, env: NodeJS.ProcessEnv): ServiceProcess {
  return tracked(new ServiceProcess(script, env, tsxArgs(script)));
}

/** Spawns `node <args>` (e.g. `--import tsx -e <code>`) with exactly this environment; `name` is for messages. */
export function spawnNode(name: string, args: readonly string[], env: NodeJS.ProcessEnv): ServiceProcess {
  return tracked(new ServiceProcess(name, env, args));
}

/**
 * Stops every process spawned by this file's tests now. Each also stops by itself when its test
 * finishes: call this only where a test needs them gone earlier.
 */
export async function stopAll(): Promise<void> {
  const procs = [...running];
  running.clear();
  await Promise.all(procs.map((proc) => proc.stop()));
}

const tempDirs = new Set<string>();

/**
 * A fresh DATA_DIR, removed when the test that made it finishes (after the processes it spawned
 * later have stopped), or, made in a hook, after the file. mkdtemp makes it 0700; when tests run
 * as root the embedded PostgreSQL runs as the `postgres` user and must be able to enter it.
 */
export async function makeDataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'feedback-proc-test-'));
  await chmod(dir, 0o755);
  tempDirs.add(dir);
  stopWhenDone(async () => {
    tempDirs.delete(dir);
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  return dir;
}

/** Removes every DATA_DIR made by makeDataDir now (each is also removed by itself); call it after stopAll. */
export async function removeDataDirs(): Promise<void> {
  const dirs = [...tempDirs];
  tempDirs.clear();
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })));
}

/** Parses the JSON log lines (pino) of a process's stdout, skipping anything else. */
export function logLines(output: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a log line
    }
  }
  return lines;
}
